package swap

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/lakeswap/lakeswap/internal/words"
	"github.com/lakeswap/lakeswap/runrecord"
	"github.com/lakeswap/lakeswap/verify"
)

// lateNotes are the warnings of a job's run on late rows it leaves
// undecided: a decision asked for that nothing needed, and late rows of
// published days it does not rebuild.
func lateNotes(j *JobInfo) []string {
	var notes []string
	if j.Undecided != "" {
		notes = append(notes, fmt.Sprintf("%s: no late row changes a day of the run, so nothing is decided and the reason is not recorded", j.Undecided))
	}
	if len(j.Pending) > 0 {
		var days []string
		for _, day := range slices.Sorted(maps.Keys(j.Pending)) {
			days = append(days, fmt.Sprintf("%s (%d)", day, j.Pending[day]))
		}
		notes = append(notes, fmt.Sprintf("source rows arrived later than the lookback for published days the run does not rebuild: %s; they wait for the run that does, and a record they move out of the run's days is in neither until then: add those days to --partitions, or use --since-last", strings.Join(days, ", ")))
	}
	return notes
}

// lateArrivals refuses a change to a published partition by source rows
// that arrived later than the job's lookback since its last landed run,
// when no decision covers them: restating it changes numbers already
// reported, a call for the metric's owner (the job's late policy
// escalate). A partition such rows leave as it was changes nothing. The
// partitions a run decides to leave are rewritten with the rows they
// hold, so that the decision is a snapshot of its own.
func lateArrivals(plan *run, override func(by, reason string)) {
	j := plan.Job
	if j == nil || j.Policy == "" {
		return
	}
	movedOut(plan)
	if d := j.Decision; d != nil && d.Decision == runrecord.LateRestate {
		// A day whose content comes out the same restates nothing: rows
		// with no arrival time, news to every run, would otherwise record
		// a restatement on each.
		changes := map[string]bool{}
		for _, pp := range plan.Partitions {
			changes[pp.Value] = pp.changesContent()
		}
		for day := range d.Rows {
			if !changes[day] {
				delete(d.Rows, day)
			}
		}
		if len(d.Rows) == 0 {
			j.Decision = nil
			if j.Policy != runrecord.LateRestate {
				j.Undecided = "--restate"
			}
		}
	}
	plan.Warnings = append(plan.Warnings, lateNotes(j)...)
	if d := j.Decision; d != nil && d.Decision != runrecord.LateCurrentPeriod {
		by := "--" + string(d.Decision)
		if j.Policy == runrecord.LateRestate {
			by = "the job's late policy restate"
		}
		override(by, d.Reason)
		for i := range plan.Partitions {
			pp := &plan.Partitions[i]
			if _, ok := d.Rows[pp.Value]; !ok {
				continue
			}
			key := verify.DisplayKey(pp.Key)
			if d.Decision == runrecord.LateLeave && pp.changesContent() {
				// Rows it holds arrived late too, or others changed:
				// what it would publish is not what it held.
				plan.Findings = append(plan.Findings, verify.Finding{Kind: verify.KindLate, Partition: pp.Key,
					Message: fmt.Sprintf("--leave keeps the partition as published, but without its late rows it would still change (%s -> %s): rows it holds arrived late too, before the watermark, or have no arrival time, or others changed; rebuild it with --restate --reason TEXT, or leave it out of the run's partitions",
						words.Count(pp.OldFingerprint.Rows, "row"), words.Count(pp.Fingerprint.Rows, "row"))})
				continue
			}
			pp.Decided = d.Decision == runrecord.LateLeave
			plan.Warnings = append(plan.Warnings, fmt.Sprintf("allowed (%s): partition %s, with %s that arrived later than the lookback, is %s by %s: %s",
				by, key, words.Count(d.Rows[pp.Value], "source row"), map[runrecord.Late]string{runrecord.LateRestate: "restated", runrecord.LateLeave: "left as published"}[d.Decision], words.Printable(d.DecidedBy), words.Printable(d.Reason)))
		}
	}
	since := "after the watermark " + j.PreviousWatermark
	if j.PreviousWatermark == "" {
		since = "and no run has recorded a watermark yet"
	}
	for _, pp := range plan.Partitions {
		r, ok := j.Escalated[pp.Value]
		if !ok || r.Rows == 0 || !pp.changesContent() {
			continue
		}
		owner := ""
		if j.Owner != "" {
			owner = " (the job names " + words.Printable(j.Owner) + " as its owner"
			if j.Note != "" {
				owner += ": " + words.Printable(j.Note)
			}
			owner += ")"
		}
		if len(r.Of) > 0 {
			plan.Findings = append(plan.Findings, verify.Finding{Kind: verify.KindLate, Partition: pp.Key,
				Message: fmt.Sprintf("it is published and changes, while %s of %s, not yet published, arrived later than the lookback of %s, %s (the first at %s, the latest %s after its event): a late correction may have moved a record out of it, and restating it changes numbers already reported, a call for the metric's owner%s; rebuild it with them (--restate --reason TEXT, recorded in the run), or leave those days out of the run's partitions",
					words.Count(r.Rows, "source row"), strings.Join(r.Of, ", "), lagText(j.Lookback), since, r.FirstArrival, lagText(r.MaxLag), owner)})
			continue
		}
		plan.Findings = append(plan.Findings, verify.Finding{Kind: verify.KindLate, Partition: pp.Key,
			Message: fmt.Sprintf("%s for it arrived later than the lookback of %s, %s (the first at %s, the latest %s after its event), and it is published: restating it changes numbers already reported, a call for the metric's owner%s; rebuild it with them (--restate --reason TEXT) or keep it as published and leave them out (--leave --reason TEXT), either recorded in the run",
				words.Count(r.Rows, "source row"), lagText(j.Lookback), since, r.FirstArrival, lagText(r.MaxLag), owner)})
	}
}

// movedOut judges a published partition of the run that changes, with no
// late rows of its own, while late rows arrived into days of the run not
// yet published (JobInfo.Into): a late correction that moved a record out
// of it changes numbers already reported as much as one into it. Under
// --restate (or the policy restate) it is restated with the rows;
// otherwise it is escalated as if they were its own.
func movedOut(plan *run) {
	j := plan.Job
	if len(j.Into) == 0 {
		return
	}
	var into LateRows
	for _, day := range slices.Sorted(maps.Keys(j.Into)) {
		r := j.Into[day]
		into.Rows += r.Rows
		into.MaxLag = max(into.MaxLag, r.MaxLag)
		if into.FirstArrival == "" || r.FirstArrival < into.FirstArrival {
			into.FirstArrival = r.FirstArrival
		}
		into.Of = append(into.Of, day)
	}
	for _, pp := range plan.Partitions {
		_, isInto := j.Into[pp.Value]
		_, escalated := j.Escalated[pp.Value]
		published := len(pp.OldFiles) > 0 || pp.OldFingerprint.Rows > 0
		if isInto || escalated || !published || !pp.changesContent() {
			continue
		}
		if d := j.Decision; d != nil && d.Decision == runrecord.LateRestate {
			if _, ok := d.Rows[pp.Value]; !ok {
				d.Rows[pp.Value] = into.Rows
			}
			continue
		}
		if d := j.Decision; d != nil && d.Decision == runrecord.LateLeave {
			if _, ok := d.Rows[pp.Value]; ok {
				continue // its own late rows are left, and judged so
			}
		}
		if j.Escalated == nil {
			j.Escalated = map[string]LateRows{}
		}
		j.Escalated[pp.Value] = into
	}
}

// lagText writes a lag of seconds as days and hours, or as Go writes a
// shorter one.
func lagText(s float64) string {
	d := time.Duration(s * float64(time.Second)).Round(time.Second)
	if d < 24*time.Hour {
		return d.String()
	}
	d = d.Round(time.Hour)
	days, rest := d/(24*time.Hour), d%(24*time.Hour)
	if rest == 0 {
		return fmt.Sprintf("%dd", days)
	}
	return fmt.Sprintf("%dd%dh", days, rest/time.Hour)
}
