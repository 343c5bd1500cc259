package job

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/internal/exact"
	"github.com/lakeswap/lakeswap/internal/words"
	"github.com/lakeswap/lakeswap/runrecord"
	"github.com/lakeswap/lakeswap/swap"
	"github.com/lakeswap/lakeswap/verify"
)

// Info is the swap.Job of a run a SQL job computed: swap asks it for the
// guard late arrivals' verdict, the record of its snapshot, the join of
// shards and whether main moved past what it read.
var _ swap.Job = (*Info)(nil)

// Tracks says whether the run tracks its rows' arrival: the job names a
// lag source and a lookback, and the table is by day.
func (i *Info) Tracks() bool { return i.Policy != "" }

// Notes are the warnings of a job's run on late rows it leaves
// undecided: a decision asked for that nothing needed, and late rows of
// published days it does not rebuild.
func (i *Info) Notes() []string {
	var notes []string
	if i.Undecided != "" {
		notes = append(notes, fmt.Sprintf("%s: no late row changes a day of the run, so nothing is decided and the reason is not recorded", i.Undecided))
	}
	if len(i.Pending) > 0 {
		var days []string
		for _, day := range slices.Sorted(maps.Keys(i.Pending)) {
			days = append(days, fmt.Sprintf("%s (%d)", day, i.Pending[day]))
		}
		notes = append(notes, fmt.Sprintf("source rows arrived later than the lookback for published days the run does not rebuild: %s; they wait for the run that does, and a record they move out of the run's days is in neither until then: add those days to --partitions, or use --since-last", strings.Join(days, ", ")))
	}
	return notes
}

// JudgeLate refuses a change to a published partition by source rows
// that arrived later than the job's lookback since its last landed run,
// when no decision covers them: restating it changes numbers already
// reported, a call for the metric's owner (the job's late policy
// escalate). A partition such rows leave as it was changes nothing. The
// partitions a run decides to leave are rewritten with the rows they
// hold (LateVerdict.Left), so that the decision is a snapshot of its own.
func (i *Info) JudgeLate(parts []swap.PartitionPlan) (swap.Job, swap.Verdict) {
	var v swap.Verdict
	if !i.Tracks() {
		return i, v
	}
	j := i.clone()
	j.movedOut(parts)
	if d := j.Decision; d != nil && d.Decision == runrecord.LateRestate {
		// A day whose content comes out the same restates nothing: rows
		// with no arrival time, news to every run, would otherwise record
		// a restatement on each.
		changes := map[string]bool{}
		for _, pp := range parts {
			changes[pp.Value] = pp.ChangesContent()
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
	v.Warnings = j.Notes()
	if d := j.Decision; d != nil && d.Decision != runrecord.LateCurrentPeriod {
		j.decided(parts, &v)
	}
	j.escalate(parts, &v)
	return j, v
}

// decided lets through the late rows of the partitions a decision
// (--restate, --leave, the policy restate) covers, and refuses a
// partition left as published that would still change.
func (j *Info) decided(parts []swap.PartitionPlan, v *swap.Verdict) {
	d := j.Decision
	v.By, v.Reason = "--"+string(d.Decision), d.Reason
	if j.Policy == runrecord.LateRestate {
		v.By = "the job's late policy restate"
	}
	for _, pp := range parts {
		if _, ok := d.Rows[pp.Value]; !ok {
			continue
		}
		key := verify.DisplayKey(pp.Key)
		if d.Decision == runrecord.LateLeave && pp.ChangesContent() {
			// Rows it holds arrived late too, or others changed: what it
			// would publish is not what it held.
			v.Findings = append(v.Findings, verify.Finding{Kind: verify.KindLate, Partition: pp.Key,
				Message: fmt.Sprintf("--leave keeps the partition as published, but without its late rows it would still change (%s -> %s): rows it holds arrived late too, before the watermark, or have no arrival time, or others changed; rebuild it with --restate --reason TEXT, or leave it out of the run's partitions",
					words.Count(pp.OldFingerprint.Rows, "row"), words.Count(pp.Fingerprint.Rows, "row"))})
			continue
		}
		if d.Decision == runrecord.LateLeave {
			v.Left = append(v.Left, pp.Value)
		}
		v.Warnings = append(v.Warnings, fmt.Sprintf("allowed (%s): partition %s, with %s that arrived later than the lookback, is %s by %s: %s",
			v.By, key, words.Count(d.Rows[pp.Value], "source row"), map[runrecord.Late]string{runrecord.LateRestate: "restated", runrecord.LateLeave: "left as published"}[d.Decision], words.Printable(d.DecidedBy), words.Printable(d.Reason)))
	}
}

// escalate refuses each partition of the run that changes while rows no
// decision covers arrived late for it (or, into days not yet published,
// may have moved a record out of it).
func (j *Info) escalate(parts []swap.PartitionPlan, v *swap.Verdict) {
	since := "after the watermark " + j.PreviousWatermark
	if j.PreviousWatermark == "" {
		since = "and no run has recorded a watermark yet"
	}
	owner := ""
	if j.Owner != "" {
		owner = " (the job names " + words.Printable(j.Owner) + " as its owner"
		if j.Note != "" {
			owner += ": " + words.Printable(j.Note)
		}
		owner += ")"
	}
	for _, pp := range parts {
		r, ok := j.Escalated[pp.Value]
		if !ok || r.Rows == 0 || !pp.ChangesContent() {
			continue
		}
		if len(r.Of) > 0 {
			v.Findings = append(v.Findings, verify.Finding{Kind: verify.KindLate, Partition: pp.Key,
				Message: fmt.Sprintf("it is published and changes, while %s of %s, not yet published, arrived later than the lookback of %s, %s (the first at %s, the latest %s after its event): a late correction may have moved a record out of it, and restating it changes numbers already reported, a call for the metric's owner%s; rebuild it with them (--restate --reason TEXT, recorded in the run), or leave those days out of the run's partitions",
					words.Count(r.Rows, "source row"), strings.Join(r.Of, ", "), lagText(j.Lookback), since, r.FirstArrival, lagText(r.MaxLag), owner)})
			continue
		}
		v.Findings = append(v.Findings, verify.Finding{Kind: verify.KindLate, Partition: pp.Key,
			Message: fmt.Sprintf("%s for it arrived later than the lookback of %s, %s (the first at %s, the latest %s after its event), and it is published: restating it changes numbers already reported, a call for the metric's owner%s; rebuild it with them (--restate --reason TEXT) or keep it as published and leave them out (--leave --reason TEXT), either recorded in the run",
				words.Count(r.Rows, "source row"), lagText(j.Lookback), since, r.FirstArrival, lagText(r.MaxLag), owner)})
	}
}

// movedOut judges a published partition of the run that changes, with no
// late rows of its own, while late rows arrived into days of the run not
// yet published (Info.Into): a late correction that moved a record out
// of it changes numbers already reported as much as one into it. Under
// --restate (or the policy restate) it is restated with the rows;
// otherwise it is escalated as if they were its own.
func (j *Info) movedOut(parts []swap.PartitionPlan) {
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
	for _, pp := range parts {
		_, isInto := j.Into[pp.Value]
		_, escalated := j.Escalated[pp.Value]
		published := len(pp.OldFiles) > 0 || pp.OldFingerprint.Rows > 0
		if isInto || escalated || !published || !pp.ChangesContent() {
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

// JoinShard joins what two shards of a job's run decided on late rows: both
// decisions' days, both sets of days left out, and the earlier watermark,
// which every row of either shard's is true of; a day pending in one that
// a shard rebuilds (parts) is pending no more. Shards that decided late
// rows apart (--leave in one, --restate in another, or other reasons)
// are refused: the run records one decision, and joining would record
// the first shard's for every day. A shard that decided nothing joins any.
func (a *Info) JoinShard(other swap.Job, parts []swap.PartitionPlan) (swap.Job, error) {
	b, ok := other.(*Info)
	if !ok {
		return nil, fmt.Errorf("join a job's run with %T", other)
	}
	if da, db := a.decision(), b.decision(); da != nil && db != nil && (da.Decision != db.Decision || da.Reason != db.Reason || da.DecidedBy != db.DecidedBy) {
		return nil, fmt.Errorf("decide late rows differently: --%s by %s (%q), and --%s by %s (%q); a run records one decision",
			da.Decision, words.Printable(da.DecidedBy), words.Printable(da.Reason), db.Decision, words.Printable(db.DecidedBy), words.Printable(db.Reason))
	}
	m := *a
	if d := b.Decision; d != nil {
		if m.Decision == nil {
			m.Decision = &runrecord.LateDecision{Decision: d.Decision, Reason: d.Reason, DecidedBy: d.DecidedBy, Owner: d.Owner}
		} else {
			joined := *m.Decision
			m.Decision = &joined
		}
		m.Decision.Rows = maps.Clone(m.Decision.Rows)
		if m.Decision.Rows == nil {
			m.Decision.Rows = map[string]int64{}
		}
		maps.Copy(m.Decision.Rows, d.Rows)
	}
	m.Pending = maps.Clone(m.Pending)
	if len(b.Pending) > 0 {
		if m.Pending == nil {
			m.Pending = map[string]int64{}
		}
		maps.Copy(m.Pending, b.Pending)
	}
	for _, pp := range parts {
		delete(m.Pending, pp.Value)
	}
	// One shard's decision is the run's: nothing is undecided.
	m.Undecided = cmp.Or(m.Undecided, b.Undecided)
	if m.Decision != nil {
		m.Undecided = ""
	}
	m.Left = joinLeft(a, b)
	ta, errA := time.Parse(time.RFC3339Nano, a.Watermark)
	tb, errB := time.Parse(time.RFC3339Nano, b.Watermark)
	if errB != nil || errA == nil && tb.Before(ta) {
		m.Watermark = b.Watermark
	}
	return &m, nil
}

// decision is the run's decision on late rows of published days, if it
// made one (current-period decides nothing of them).
func (i *Info) decision() *runrecord.LateDecision {
	if i.Decision == nil || i.Decision.Decision == runrecord.LateCurrentPeriod {
		return nil
	}
	return i.Decision
}

// joinLeft joins the days two shards leave out: a day one shard left is
// its own; a day left before stays left unless a shard restated it (and
// took it out of its own).
func joinLeft(a, b *Info) map[string]runrecord.Left {
	var out map[string]runrecord.Left
	days := slices.Concat(slices.Collect(maps.Keys(a.Left)), slices.Collect(maps.Keys(b.Left)))
	slices.Sort(days)
	for _, day := range slices.Compact(days) {
		la, inA := a.Left[day]
		lb, inB := b.Left[day]
		var l runrecord.Left
		switch {
		case b.leaves(day):
			l = lb
		case a.leaves(day):
			l = la
		case inA && inB:
			l = la
		default:
			continue
		}
		if out == nil {
			out = map[string]runrecord.Left{}
		}
		out[day] = l
	}
	return out
}

// leaves says whether a job's run decided to leave a day's late rows.
func (i *Info) leaves(day string) bool {
	if i.Decision == nil || i.Decision.Decision != runrecord.LateLeave {
		return false
	}
	_, ok := i.Decision.Rows[day]
	return ok
}

// Record writes what the snapshot committing parts records of the job:
// its version, sources, rejected and late rows, the reconciliation of
// those partitions, the decision as far as they go and, when whole, how
// far the run read (its watermark and the days left out).
func (i *Info) Record(r *runrecord.Record, parts []swap.PartitionPlan, whole bool) {
	r.JobVersion, r.SourcesHash, r.Rejected, r.Late = i.Version, i.SourcesHash, i.Rejected, i.Late
	r.LateDecision = i.share(parts)
	if i.Policy != "" && whole {
		// A batch before the last leaves rows of later batches unread:
		// only the run whole moves the watermark. The days left out are
		// recorded even when none are, so that a day taken back in
		// (restated) is not read from an earlier run.
		r.Watermark, r.LateLeft = i.Watermark, i.Left
		if r.LateLeft == nil {
			r.LateLeft = map[string]runrecord.Left{}
		}
	}
	if i.Reconciled != nil {
		r.Reconciled = map[string]map[string]exact.Sum{}
		for _, pp := range parts { // a batch records its own
			if f, ok := i.Reconciled[pp.Value]; ok {
				m := map[string]exact.Sum{"rows": exact.Of(f.Rows)}
				for col, sum := range f.Sums {
					m[col] = sum
				}
				r.Reconciled[pp.Key] = m
			}
		}
	}
}

// share is the run's decision on late rows, as far as parts go (a batch
// records its own share), naming them: the days of their events, or for
// current-period the days they arrived in.
func (i *Info) share(parts []swap.PartitionPlan) *runrecord.LateDecision {
	d := i.Decision
	if d == nil {
		return nil
	}
	share := *d
	share.Partitions, share.Rows = nil, map[string]int64{}
	for _, pp := range parts {
		if n, ok := d.Rows[pp.Value]; ok {
			share.Partitions, share.Rows[pp.Value] = append(share.Partitions, pp.Key), n
		}
	}
	if len(share.Rows) == 0 {
		return nil
	}
	return &share
}

// Stale says why a job's run that tracks its rows' arrival cannot be
// committed on a main where another such run landed since its base: the
// watermark and the late rows left out that it records were read before
// that run's, which they would overwrite.
func (i *Info) Stale(meta table.Metadata, base *int64, runID string) string {
	if !i.Tracks() {
		return ""
	}
	head := meta.CurrentSnapshot()
	if head == nil {
		return ""
	}
	for _, s := range table.AncestorsOf(head.SnapshotID, meta.SnapshotByID) {
		if base != nil && s.SnapshotID == *base {
			break
		}
		if s.Summary == nil || s.Summary.Properties[runrecord.PropRunID] == runID { // its own earlier batches
			continue
		}
		if run, ok := runrecord.UndoneBy(s.Summary.Properties); ok {
			return fmt.Sprintf("snapshot %d, committed since the plan, is a scoped rollback of run %s: what this run read of its job's arrivals was read before it; stage the run again", s.SnapshotID, run)
		}
		if w := s.Summary.Properties[runrecord.PropWatermark]; w != "" {
			return fmt.Sprintf("snapshot %d, a job run committed since the plan, recorded the watermark %s: this run's watermark and the late rows it leaves out were read before it; stage the run again", s.SnapshotID, w)
		}
	}
	return ""
}
