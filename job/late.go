package job

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/contract"
	"github.com/lakeswap/lakeswap/internal/words"
	"github.com/lakeswap/lakeswap/outcome"
	"github.com/lakeswap/lakeswap/runrecord"
	"github.com/lakeswap/lakeswap/source"
	"github.com/lakeswap/lakeswap/swap"
)

// LateChoice is a run's decision on source rows that arrived later than
// the job's lookback into partitions already published (--restate or
// --leave), with why and who decided it.
type LateChoice struct {
	Decision  runrecord.Late // restate or leave
	Reason    string
	DecidedBy string
}

// arrival is a run's view of its lag source's rows by when they arrived:
// what the table recorded of the last landed run (its watermark, the days
// left out), the job's policy and the run's decision, and, once decided,
// which rows the run leaves out, moves or is refused for.
type arrival struct {
	job      *Job
	src      string // the lag source
	lookback int64  // microseconds
	state    *arrivals
	since    int64 // the previous watermark, in microseconds; valid if hasSince
	hasSince bool
	choice   *LateChoice
	// left are the days whose late rows the run leaves out, and which:
	// those left by earlier runs, less the days it restates, and those it
	// leaves.
	left map[string]window
	now  int64 // the run's start, in microseconds: no watermark passes it
	// days are the days the run rebuilds, as ISO dates: a list with a
	// gap (2020-01-01,2020-01-02,2020-01-04) leaves the day between out.
	days map[string]bool
}

// inRun says whether the run rebuilds a day.
func (a *arrival) inRun(day string) bool { return a.days[day] }

// runDays is the SQL list of the days the run rebuilds.
func (a *arrival) runDays() string {
	var days []string
	for _, day := range slices.Sorted(maps.Keys(a.days)) {
		days = append(days, "CAST("+source.SQLString(day)+" AS DATE)")
	}
	if len(days) == 0 {
		return "(NULL)"
	}
	return "(" + strings.Join(days, ", ") + ")"
}

// window is the arrival times of the late rows of a day left out:
// after after (any time, without hasAfter) up to through, later than
// lookback after their event (the job's lookback when they were left),
// in microseconds.
type window struct {
	after, through, lookback int64
	hasAfter                 bool
}

// tracksArrival says whether runs of the job on a table of contract c
// track their rows' arrival: the job names a lag and a lookback, and the
// table is partitioned by one date column, a day being a partition.
func (j *Job) tracksArrival(c *contract.Contract) bool {
	_, ok := j.Sources[j.lagSource()]
	if !ok || j.Lag.Event == "" || j.Lag.Ingested == "" || j.Lookback <= 0 || !c.Partition.One() {
		return false
	}
	f := c.Partition.Fields[0]
	return c.Arrow.Field(f.Column).Type.ID() == arrow.DATE32 && (f.Transform == "identity" || f.Transform == "day")
}

// policy is the job's late policy, escalate where it names none.
func (j *Job) policy() runrecord.Late { return cmp.Or(j.OnLate.Policy, runrecord.LateEscalate) }

// arrivals is what the table says of a job's source rows' arrival: the
// watermark, and the days whose late rows stay left out, that the last
// landed run recorded; and which partitions hold rows.
type arrivals struct {
	Watermark string
	Left      map[string]runrecord.Left
	Published map[string]bool
}

// arrivalsOf reads, from main's history, the days left out that the last
// landed job run recorded (runrecord.PropLateLeft), and the watermark of
// the last that recorded one (runrecord.PropWatermark). What runs
// recorded from a run a scoped rollback took back up to the rollback is
// passed over: the rows it read are no longer all in the table, and are
// read again.
func arrivalsOf(ctx context.Context, target *swap.Target) (*arrivals, error) {
	meta := target.Metadata()
	out := &arrivals{}
	head := meta.CurrentSnapshot()
	var chain []table.Snapshot
	if head != nil {
		chain = table.AncestorsOf(head.SnapshotID, meta.SnapshotByID)
	}
	undone, leftRead := map[string]bool{}, false
	for _, s := range chain {
		if s.Summary == nil {
			continue
		}
		props := s.Summary.Properties
		id := props[runrecord.PropRunID]
		if run, ok := runrecord.UndoneBy(props); ok {
			undone[run] = true
			continue
		}
		if len(undone) > 0 {
			delete(undone, id) // passed over up to the run undone, and it too
			continue
		}
		if v, ok := props[runrecord.PropLateLeft]; ok && !leftRead {
			if err := json.Unmarshal([]byte(v), &out.Left); err != nil {
				return nil, fmt.Errorf("snapshot %d: %s: %w", s.SnapshotID, runrecord.PropLateLeft, err)
			}
			leftRead = true
		}
		if w := props[runrecord.PropWatermark]; w != "" {
			out.Watermark = w
			break
		}
	}
	var err error
	out.Published, err = target.Published(ctx)
	return out, err
}

// newArrival reads the table's record of arrivals for a run of the job.
func (j *Job) newArrival(ctx context.Context, target *swap.Target, choice *LateChoice) (*arrival, error) {
	state, err := arrivalsOf(ctx, target)
	if err != nil {
		return nil, err
	}
	a := &arrival{job: j, src: j.lagSource(), lookback: time.Duration(j.Lookback).Microseconds(), state: state, choice: choice,
		left: map[string]window{}, now: time.Now().UnixMicro()}
	if state.Watermark != "" {
		t, err := time.Parse(time.RFC3339Nano, state.Watermark)
		if err != nil {
			return nil, fmt.Errorf("the table's watermark %q: %w", state.Watermark, err)
		}
		a.since, a.hasSince = t.UnixMicro(), true
	}
	for day, l := range state.Left {
		var w window
		through, err := time.Parse(time.RFC3339Nano, l.Through)
		if err == nil && l.After != "" {
			var after time.Time
			after, err = time.Parse(time.RFC3339Nano, l.After)
			w.after, w.hasAfter = after.UnixMicro(), true
		}
		if err != nil {
			return nil, fmt.Errorf("the table's late rows left out of %s: %w", day, err)
		}
		w.through, w.lookback = through.UnixMicro(), int64(l.Lookback*1e6)
		if l.Lookback == 0 {
			w.lookback = a.lookback
		}
		a.left[day] = w
	}
	return a, nil
}

// The SQL of a lag source row's times, in microseconds, and its day.
func (a *arrival) eventUS() string {
	return "epoch_us(try_cast((" + a.job.Lag.Event + ") AS TIMESTAMPTZ))"
}
func (a *arrival) arrivedUS() string {
	return "epoch_us(try_cast((" + a.job.Lag.Ingested + ") AS TIMESTAMPTZ))"
}
func (a *arrival) eventDay() string {
	return "CAST(try_cast((" + a.job.Lag.Event + ") AS TIMESTAMPTZ) AS DATE)"
}

// late is true for a row that arrived later than the lookback after its
// event, and for a row of a known event with no arrival time (null, or
// text that is not a time): whether it is late cannot be told, so it is
// judged as late, never let in unasked.
func (a *arrival) late() string {
	return fmt.Sprintf("coalesce(%s - %s > %d, %[2]s IS NOT NULL)", a.arrivedUS(), a.eventUS(), a.lookback)
}

// lateKnown is true for a row known to have arrived later than the
// lookback: current-period moves only a row whose arrival day it knows.
func (a *arrival) lateKnown() string {
	return fmt.Sprintf("coalesce(%s - %s > %d, false)", a.arrivedUS(), a.eventUS(), a.lookback)
}

// isNew is true for a row that arrived after the previous watermark, or
// whose arrival time is unknown.
func (a *arrival) isNew() string {
	if !a.hasSince {
		return "true"
	}
	return fmt.Sprintf("coalesce(%s > %d, true)", a.arrivedUS(), a.since)
}

// landing is the day a row's partition is: the day it arrived, for a row
// the current-period policy moves, else the day of its event.
func (a *arrival) landing() string {
	if a.job.policy() == runrecord.LateCurrentPeriod {
		return "CASE WHEN " + a.lateKnown() + " THEN CAST(try_cast((" + a.job.Lag.Ingested + ") AS TIMESTAMPTZ) AS DATE) ELSE " + a.eventDay() + " END"
	}
	return a.eventDay()
}

// leftOut is true for a late row the run leaves out: one a run decided to
// leave (--leave), this one or an earlier one, late by the lookback the
// job had then.
func (a *arrival) leftOut() string {
	var conds []string
	for _, day := range slices.Sorted(maps.Keys(a.left)) {
		w := a.left[day]
		c := fmt.Sprintf("%[1]s = CAST(%[2]s AS DATE) AND %[3]s <= %[4]d AND coalesce(%[3]s - %[5]s > %[6]d, false)",
			a.eventDay(), source.SQLString(day), a.arrivedUS(), w.through, a.eventUS(), w.lookback)
		if w.hasAfter {
			c += fmt.Sprintf(" AND %s > %d", a.arrivedUS(), w.after)
		}
		conds = append(conds, "("+c+")")
	}
	if len(conds) == 0 {
		return "false"
	}
	return "(" + strings.Join(conds, " OR ") + ")"
}

// sinceLast finds the days --since-last rebuilds: those of the rows that
// arrived at or after the previous watermark less the lookback (a tie at
// the boundary is read again, which replacing makes harmless), and every
// day between them that the source holds rows of, for the SQL's range
// ($from..$to) to give no row of a day the run does not own. With no
// watermark recorded, every row counts.
func (a *arrival) sinceLast(ctx context.Context, eng *source.SQLEngine) ([]string, error) {
	// A row with no arrival time is news to every run (late and new, as
	// judge takes it), so no watermark passes it: --since-last cannot say
	// which days it rebuilds, and would otherwise pass the row over.
	if err := a.noUnknownArrivals(ctx, eng); err != nil {
		return nil, err
	}
	since := a.arrivedUS() + " IS NOT NULL"
	if a.hasSince {
		since = fmt.Sprintf("%s >= %d", a.arrivedUS(), a.since-a.lookback)
	}
	q := fmt.Sprintf(`WITH rows AS (SELECT %s AS day, %s AS fresh FROM %s),
		touched AS (SELECT min(day) AS lo, max(day) AS hi FROM rows WHERE fresh)
		SELECT DISTINCT CAST(day AS VARCHAR) AS day FROM rows, touched WHERE day BETWEEN lo AND hi ORDER BY day`,
		a.landing(), since, kept(a.src))
	var days []string
	err := eachRow(ctx, eng, q, func(rec arrow.RecordBatch, i int) {
		days = append(days, strings.Clone(rec.Column(0).(*array.String).Value(i)))
	})
	if err != nil {
		return nil, fmt.Errorf("find the days that arrived since the watermark: %w", err)
	}
	if len(days) == 0 {
		since := "has both an event and an arrival time"
		if a.hasSince {
			since = "with an event time arrived at or after " + formatUS(a.since-a.lookback) + " (the watermark " + a.state.Watermark + " less the lookback)"
		}
		return nil, outcome.Invalid(fmt.Errorf("--since-last: no row of source %s %s (%s, %s): there is no day to rebuild", a.src, since, a.job.Lag.Event, a.job.Lag.Ingested))
	}
	return days, nil
}

// noUnknownArrivals refuses --since-last while the lag source holds rows
// of a known day and no arrival time (null, or text that is not a time),
// naming how many and the first day.
func (a *arrival) noUnknownArrivals(ctx context.Context, eng *source.SQLEngine) error {
	q := fmt.Sprintf(`SELECT count(*)::BIGINT, coalesce(CAST(min(day) AS VARCHAR), '') FROM (SELECT %s AS day FROM %s WHERE %s IS NULL AND NOT %s) WHERE day IS NOT NULL`,
		a.eventDay(), kept(a.src), a.arrivedUS(), a.leftOut())
	var n int64
	var day string
	if err := eachRow(ctx, eng, q, func(rec arrow.RecordBatch, i int) {
		n, day = rec.Column(0).(*array.Int64).Value(i), strings.Clone(rec.Column(1).(*array.String).Value(i))
	}); err != nil {
		return fmt.Errorf("find the rows with no arrival time: %w", err)
	}
	if n == 0 {
		return nil
	}
	return outcome.Invalid(fmt.Errorf("--since-last: source %[2]s holds %[1]s with no arrival time (%[3]s is null, or not a time; the first of day %[4]s): no watermark passes them, so --since-last cannot say which days to rebuild; give them one, or reject them in the job (rejects: [{reason: no arrival time, when: \"try_cast(%[3]s AS TIMESTAMPTZ) IS NULL\"}]), or rebuild their days with --partitions",
		words.Count(n, "row"), a.src, strings.TrimSpace(a.job.Lag.Ingested), day))
}

// decide judges the late rows of the days from..to and makes the lag
// source's view of them: rows left out (by this run or an earlier one)
// are not in it, and under current-period a late row is in the day it
// arrived. It fills in the job's record: the rows refused for, the
// decision, the days left out, and the watermark the run records.
func (a *arrival) decide(ctx context.Context, eng *source.SQLEngine, days []string, info *Info) error {
	j := a.job
	a.days = map[string]bool{}
	for _, d := range days {
		a.days[d] = true
	}
	from, to := slices.Min(days), slices.Max(days)
	info.Policy, info.Owner, info.Note = j.policy(), j.OnLate.Owner, j.OnLate.Note
	info.PreviousWatermark = a.state.Watermark
	params := map[string]string{"from": from, "to": to}
	var d *runrecord.LateDecision
	switch {
	case info.Policy == runrecord.LateCurrentPeriod:
		// Late rows load into the day they arrived, every run alike.
		moved := map[string]int64{}
		q := fmt.Sprintf(`SELECT CAST(CAST(try_cast((%s) AS TIMESTAMPTZ) AS DATE) AS VARCHAR), count(*)::BIGINT FROM %s
			WHERE %s AND CAST(try_cast((%[1]s) AS TIMESTAMPTZ) AS DATE) IN %[4]s GROUP BY 1`,
			j.Lag.Ingested, kept(a.src), a.lateKnown(), a.runDays())
		if err := eachRowParams(ctx, eng, q, params, func(rec arrow.RecordBatch, i int) {
			moved[strings.Clone(rec.Column(0).(*array.String).Value(i))] = rec.Column(1).(*array.Int64).Value(i)
		}); err != nil {
			return fmt.Errorf("count the rows that arrived late: %w", err)
		}
		if len(moved) > 0 {
			d = &runrecord.LateDecision{Decision: runrecord.LateCurrentPeriod, Rows: moved, Owner: j.OnLate.Owner, Reason: j.OnLate.Note}
		}
	default:
		var err error
		if d, err = a.judge(ctx, eng, params, info); err != nil {
			return err
		}
	}
	info.Decision = d
	if d == nil && a.choice != nil {
		info.Undecided = "--" + string(a.choice.Decision)
	}
	if err := a.view(ctx, eng); err != nil {
		return err
	}
	if len(a.left) > 0 {
		info.Left = map[string]runrecord.Left{}
		for day, w := range a.left {
			l := runrecord.Left{Through: formatUS(w.through), Lookback: float64(w.lookback) / 1e6}
			if w.hasAfter {
				l.After = formatUS(w.after)
			}
			info.Left[day] = l
		}
	}
	w, err := a.watermark(ctx, eng, params)
	if err != nil {
		return err
	}
	info.Watermark = w
	return nil
}

// judge counts, by the day of their event, the late rows of the days
// from..to that are new since the previous watermark or left out before
// (and the new ones of published days outside them, as Pending),
// and decides each published day's: the run's choice, the job's policy
// restate, or none (escalate: the stage refuses a partition they change,
// from Escalated).
func (a *arrival) judge(ctx context.Context, eng *source.SQLEngine, params map[string]string, info *Info) (*runrecord.LateDecision, error) {
	type counts struct {
		fresh, left      int64
		unknown          int64 // of fresh, with no arrival time
		first, last, lag int64
	}
	byDay := map[string]*counts{}
	// A row left out is no news, whenever it arrived.
	q := fmt.Sprintf(`SELECT CAST(day AS VARCHAR), count(*) FILTER (WHERE fresh)::BIGINT, count(*) FILTER (WHERE left_out)::BIGINT,
			count(*) FILTER (WHERE fresh AND arrived IS NULL)::BIGINT,
			coalesce(min(arrived) FILTER (WHERE fresh), 0)::BIGINT, coalesce(max(arrived) FILTER (WHERE fresh), 0)::BIGINT,
			coalesce(max(arrived - event) FILTER (WHERE fresh), 0)::BIGINT
		FROM (SELECT %s AS day, %s AS arrived, %s AS event, %s AND %s AND NOT %s AS fresh, %[6]s AS left_out FROM %s)
		WHERE fresh OR left_out
		GROUP BY 1`, a.eventDay(), a.arrivedUS(), a.eventUS(), a.late(), a.isNew(), a.leftOut(), kept(a.src))
	err := eachRowParams(ctx, eng, q, params, func(rec arrow.RecordBatch, i int) {
		v := func(c int) int64 { return rec.Column(c).(*array.Int64).Value(i) }
		byDay[strings.Clone(rec.Column(0).(*array.String).Value(i))] = &counts{fresh: v(1), left: v(2), unknown: v(3), first: v(4), last: v(5), lag: v(6)}
	})
	if err != nil {
		return nil, fmt.Errorf("count the rows that arrived later than the lookback: %w", err)
	}
	choice := a.choice
	if choice == nil && a.job.policy() == runrecord.LateRestate {
		choice = &LateChoice{Decision: runrecord.LateRestate, Reason: cmp.Or(a.job.OnLate.Note, "the job's late policy is restate"), DecidedBy: "the job's late policy restate"}
	}
	d := &runrecord.LateDecision{Rows: map[string]int64{}, Owner: a.job.OnLate.Owner}
	if choice != nil {
		d.Decision, d.Reason, d.DecidedBy = choice.Decision, choice.Reason, choice.DecidedBy
	}
	for _, day := range slices.Sorted(maps.Keys(byDay)) {
		c := byDay[day]
		// Only rows known to have arrived late: a row of no arrival time
		// is judged in its own day, not taken for a correction.
		if known := c.fresh - c.unknown; known > 0 && !a.state.Published[day] && a.inRun(day) && a.hasSince {
			if info.Into == nil {
				info.Into = map[string]LateRows{}
			}
			info.Into[day] = LateRows{Rows: known, FirstArrival: firstArrival(c.first), MaxLag: float64(c.lag) / 1e6}
		}
		fresh := c.fresh > 0 && a.state.Published[day]
		if !a.inRun(day) {
			// With no watermark yet, the run takes published days as read.
			if fresh && a.hasSince {
				// Not the run's to decide, but a record they move out
				// of its days is in neither until theirs is rebuilt.
				if info.Pending == nil {
					info.Pending = map[string]int64{}
				}
				info.Pending[day] = c.fresh
			}
			continue
		}
		switch {
		case choice != nil && choice.Decision == runrecord.LateRestate && (fresh || c.left > 0):
			d.Rows[day] = c.fresh + c.left
			delete(a.left, day)
		case choice != nil && choice.Decision == runrecord.LateLeave && fresh && c.fresh > c.unknown:
			// Rows with no arrival time cannot be recorded as left: they
			// stay in, and the stage refuses a day they change.
			d.Rows[day] = c.fresh - c.unknown + c.left
			w, ok := a.left[day]
			if !ok {
				w = window{after: a.since, hasAfter: a.hasSince, lookback: a.lookback}
			}
			// Never past the run's start, as the watermark: a row stamped
			// in the future must not leave later rows out unasked.
			w.through = max(w.through, min(c.last, a.now))
			a.left[day] = w
		case fresh:
			if info.Escalated == nil {
				info.Escalated = map[string]LateRows{}
			}
			info.Escalated[day] = LateRows{Rows: c.fresh, FirstArrival: firstArrival(c.first), MaxLag: float64(c.lag) / 1e6}
		}
	}
	// A restatement may yet cover a published day a late row into a new
	// day moved a record out of (swap's movedOut), whichever it is.
	if len(d.Rows) == 0 && (d.Decision != runrecord.LateRestate || len(info.Into) == 0) {
		return nil, nil
	}
	return d, nil
}

// firstArrival writes the first arrival of late rows, in microseconds,
// 0 for rows of no arrival time.
func firstArrival(us int64) string {
	if us == 0 {
		return "an unknown time (rows with no arrival time are news to every run: give them one, or reject them in the job)"
	}
	return time.UnixMicro(us).UTC().Format("2006-01-02 15:04Z07:00")
}

// view makes the lag source's view again from its kept rows: without the
// rows left out, and under current-period with a late row in the day it
// arrived, flagged.
func (a *arrival) view(ctx context.Context, eng *source.SQLEngine) error {
	sel := "*"
	if a.job.policy() == runrecord.LateCurrentPeriod {
		col := strings.TrimSpace(a.job.Lag.Event)
		typ, err := columnType(ctx, eng, kept(a.src), col)
		if err != nil {
			return err
		}
		var taken string
		q := "SELECT column_name FROM (DESCRIBE SELECT * FROM " + kept(a.src) + ") WHERE lower(column_name) = lower($col)"
		if err := eachRowParams(ctx, eng, q, map[string]string{"col": a.job.OnLate.Flag}, func(rec arrow.RecordBatch, i int) {
			taken = strings.Clone(rec.Column(0).(*array.String).Value(i))
		}); err != nil {
			return fmt.Errorf("source %s: its columns: %w", a.src, err)
		}
		if taken != "" { // the engine's names are case-blind
			return outcome.Invalid(fmt.Errorf("job %s: late: flag %s is a column source %s already has (%s): name a new column for the flag", a.job.File, a.job.OnLate.Flag, a.src, taken))
		}
		sel = fmt.Sprintf("* REPLACE (CASE WHEN %[1]s THEN CAST(try_cast((%[2]s) AS TIMESTAMPTZ) AS %[3]s) ELSE %[4]s END AS %[4]s), %[1]s AS %[5]s",
			a.lateKnown(), a.job.Lag.Ingested, typ, ident(col), ident(a.job.OnLate.Flag))
	}
	q := "CREATE OR REPLACE TEMP VIEW " + ident(a.src) + " AS SELECT " + sel + " FROM " + kept(a.src) + " WHERE NOT " + a.leftOut()
	if err := eng.Exec(ctx, q); err != nil {
		return fmt.Errorf("source %s: its late rows: %w", a.src, err)
	}
	return nil
}

// watermark is the arrival time the run reads up to: the greatest such
// that every row of the lag source that arrived by then, since the
// previous watermark, is in a day the run rebuilds or one it leaves out.
// It is never past the run's start: a row stamped as arriving in the
// future would otherwise end every later row's news, so it stays new.
// A row of another day stops it just before, to be read again by the run
// that rebuilds its day. It is the previous watermark where nothing
// moves it.
func (a *arrival) watermark(ctx context.Context, eng *source.SQLEngine, params map[string]string) (string, error) {
	// With no watermark yet, a day already published is taken as read:
	// the runs before watermarks, or another tool, built it.
	published := ""
	if !a.hasSince {
		var days []string
		for _, day := range slices.Sorted(maps.Keys(a.state.Published)) {
			if a.state.Published[day] {
				days = append(days, "CAST("+source.SQLString(day)+" AS DATE)")
			}
		}
		if len(days) > 0 {
			published = " AND day NOT IN (" + strings.Join(days, ", ") + ")"
		}
	}
	q := fmt.Sprintf(`WITH r AS (
			SELECT %s AS arrived, %s AS day, %s AS left_out FROM %s WHERE %[1]s <= %[7]d AND %[5]s
		)
		SELECT max(arrived)::BIGINT FROM r WHERE arrived < coalesce(
			(SELECT min(arrived) FROM r WHERE NOT left_out AND day IS NOT NULL AND day NOT IN %[8]s%[6]s),
			9223372036854775807)`, a.arrivedUS(), a.landing(), a.leftOut(), kept(a.src), a.isNew(), published, a.now, a.runDays())
	var us int64
	var found bool
	err := eachRowParams(ctx, eng, q, params, func(rec arrow.RecordBatch, i int) {
		if col := rec.Column(0).(*array.Int64); col.IsValid(i) {
			us, found = col.Value(i), true
		}
	})
	if err != nil {
		return "", fmt.Errorf("find the watermark: %w", err)
	}
	if !found {
		return a.state.Watermark, nil
	}
	return formatUS(us), nil
}

// formatUS writes microseconds since the epoch as an RFC 3339 time in UTC.
func formatUS(us int64) string { return time.UnixMicro(us).UTC().Format(time.RFC3339Nano) }

// columnType is the engine's type of a view's column.
func columnType(ctx context.Context, eng *source.SQLEngine, view, col string) (string, error) {
	var typ string
	q := "SELECT column_type FROM (DESCRIBE SELECT * FROM " + view + ") WHERE column_name = $col"
	err := eachRowParams(ctx, eng, q, map[string]string{"col": col}, func(rec arrow.RecordBatch, i int) {
		typ = strings.Clone(rec.Column(0).(*array.String).Value(i))
	})
	if err == nil && typ == "" {
		err = errors.New("the source has no such column")
	}
	if err != nil {
		return "", fmt.Errorf("the type of %s, the late rows' event time: %w", col, err)
	}
	return typ, nil
}

// eachRow calls fn for every row a query returns.
func eachRow(ctx context.Context, eng *source.SQLEngine, q string, fn func(arrow.RecordBatch, int)) error {
	return eachRowParams(ctx, eng, q, nil, fn)
}

func eachRowParams(ctx context.Context, eng *source.SQLEngine, q string, params map[string]string, fn func(arrow.RecordBatch, int)) error {
	rr, err := eng.Query(ctx, q, params)
	if err != nil {
		return err
	}
	defer rr.Release()
	for rr.Next() {
		rec := rr.RecordBatch()
		for i := range int(rec.NumRows()) {
			fn(rec, i)
		}
	}
	return rr.Err()
}

// lagReadable refuses a lag whose event or arrival time reads as no time
// on every row of the lag source that holds one: an epoch number
// (1577836800), say, which is not taken for a time. Left as it is, every
// row would be of no day and on time, and the late guard would judge
// nothing while the run said no row arrived late.
func (j *Job) lagReadable(ctx context.Context, eng *source.SQLEngine) error {
	src := j.lagSource()
	lags := []struct{ name, expr string }{{"event_time", j.Lag.Event}, {"ingested_at", j.Lag.Ingested}}
	// Both times in one scan of the source; where that fails, each alone,
	// to name the one that does.
	cols := make([]string, len(lags))
	for i, lag := range lags {
		cols[i] = fmt.Sprintf("(%s) AS v%d", lag.expr, i)
	}
	var aggs []string
	for i := range lags {
		aggs = append(aggs, fmt.Sprintf(`count(*) FILTER (WHERE v%[1]d IS NOT NULL)::BIGINT, count(try_cast(v%[1]d AS TIMESTAMPTZ))::BIGINT,
			CAST(any_value(v%[1]d) FILTER (WHERE v%[1]d IS NOT NULL) AS VARCHAR), typeof(any_value(v%[1]d))`, i))
	}
	type readable struct {
		held, read   int64
		example, typ string
	}
	got := make([]readable, len(lags))
	query := func(cols, aggs []string, got []readable) error {
		q := fmt.Sprintf("SELECT %s FROM (SELECT %s FROM %s)", strings.Join(aggs, ", "), strings.Join(cols, ", "), ident(src))
		return eachRow(ctx, eng, q, func(rec arrow.RecordBatch, r int) {
			for i := range got {
				got[i] = readable{held: rec.Column(4 * i).(*array.Int64).Value(r), read: rec.Column(4*i + 1).(*array.Int64).Value(r),
					example: strings.Clone(rec.Column(4*i + 2).(*array.String).Value(r)), typ: strings.Clone(rec.Column(4*i + 3).(*array.String).Value(r))}
			}
		})
	}
	if query(cols, aggs, got) != nil {
		for i, lag := range lags {
			one := fmt.Sprintf("(%s) AS v0", lag.expr)
			if err := query([]string{one}, aggs[:1], got[i:i+1]); err != nil {
				return outcome.Invalid(fmt.Errorf("job %s: lag: %s %s: %w", j.File, lag.name, lag.expr, err))
			}
		}
	}
	for i, lag := range lags {
		if g := got[i]; g.held > 0 && g.read == 0 {
			return outcome.Invalid(fmt.Errorf("job %s: lag: %s %s reads as no time on any of the %d rows of source %s that hold one (one is %s, of type %s), so no row could be judged late: a lag time is a timestamp, a date, or text in ISO 8601; for epoch seconds write to_timestamp(CAST(%[3]s AS BIGINT)) in lag, for milliseconds epoch_ms(CAST(%[3]s AS BIGINT))",
				j.File, lag.name, strings.TrimSpace(lag.expr), g.held, src, strconv.Quote(g.example), g.typ))
		}
	}
	return nil
}
