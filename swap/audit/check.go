package audit

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/contract"
	"github.com/lakeswap/lakeswap/internal/exact"
	"github.com/lakeswap/lakeswap/internal/words"
	"github.com/lakeswap/lakeswap/outcome"
	"github.com/lakeswap/lakeswap/runrecord"
	"github.com/lakeswap/lakeswap/swap/internal/snapshot"
	"github.com/lakeswap/lakeswap/verify"
)

// CheckRequest is what a standing check of a table asks: each check runs
// when its field is set.
type CheckRequest struct {
	Table table.Identifier
	// MaxAge fails the table when its newest partition (of a date or time
	// field: since its period ended) or, for another partitioning, its
	// last run is older than this.
	MaxAge time.Duration
	// Band fails the table when its newest partition's rows or an additive
	// sum lies outside it, as a ratio to the mean of the Trailing
	// partitions before it.
	Band     *contract.Band
	Trailing int
	// Verified fails the table when its last run on main no longer
	// fingerprints as it recorded.
	Verified bool
	// Contract fails the table when a partition's rows break its contract
	// (grain, required columns, column checks): the partitions Partitions
	// selects, or the newest.
	Contract   bool
	Partitions []string
	// TableChecks, when set, judges the partitions Contract judges by the
	// contract's checks that read more than a row at a time
	// (relationships, unique-table, assertions): swap's Publisher does.
	TableChecks func(ctx context.Context, ident table.Identifier, at *snapshot.At, values []string) ([]verify.Finding, []string, error)

	// Now is the check's time (zero: the clock's).
	Now time.Time
}

// CheckLine is one check's verdict.
type CheckLine struct {
	Name    string `json:"name"`
	OK      bool   `json:"ok"`
	Message string `json:"message"`
}

// Check runs a table's standing checks, for a scheduler to run after (or
// between) backfills: each says in one line what it found. An error is a
// table that cannot be read.
func (a Auditor) Check(ctx context.Context, req CheckRequest) ([]CheckLine, error) {
	tbl, err := a.Catalog.LoadTable(ctx, req.Table)
	if err != nil {
		return nil, err
	}
	meta := tbl.Metadata()
	head := meta.CurrentSnapshot()
	if head == nil {
		return []CheckLine{{Name: "snapshot", Message: "the table has no snapshot: nothing was ever published to it"}}, nil
	}
	now := req.Now
	if now.IsZero() {
		now = time.Now()
	}
	at, err := snapshot.Load(ctx, a.Catalog, req.Table, head.SnapshotID)
	if err != nil {
		return nil, err
	}
	values := make([]string, 0, len(at.Live))
	for v, files := range at.Live {
		if len(files) > 0 && v != contract.NullPartition {
			values = append(values, v)
		}
	}
	c := at.Contract
	slices.SortFunc(values, func(a, b string) int { return c.Partition.Compare(a, b) })
	var out []CheckLine
	if req.MaxAge > 0 {
		out = append(out, freshness(meta, c, values, now, req.MaxAge))
	}
	if req.Band != nil {
		line, err := volume(ctx, at, values, *req.Band, req.Trailing)
		if err != nil {
			return nil, err
		}
		out = append(out, line)
	}
	if req.Verified {
		out = append(out, a.lastRunVerified(ctx, req.Table, meta))
	}
	if req.Contract {
		line, err := keepsContract(ctx, at, values, req)
		if err != nil {
			return nil, err
		}
		out = append(out, line)
	}
	return out, nil
}

// keepsContract judges the rows of the partitions selectors select (the
// newest, with none) as a run's are judged.
func keepsContract(ctx context.Context, at *snapshot.At, values []string, req CheckRequest) (CheckLine, error) {
	selectors := req.Partitions
	line := CheckLine{Name: "contract"}
	c := at.Contract
	judged := values[max(0, len(values)-1):]
	if len(selectors) > 0 {
		sel, err := c.Partition.ParseSelectors(selectors)
		if err != nil {
			return line, outcome.Invalid(err)
		}
		judged = slices.DeleteFunc(slices.Clone(values), func(v string) bool { return !sel.Owns(v) })
	}
	if len(judged) == 0 {
		line.Message = "no partition of the table to judge"
		return line, nil
	}
	var bad []string
	var total int64
	var more []verify.Finding
	var warned []string // of the checks written warn:
	if req.TableChecks != nil {
		var err error
		if more, warned, err = req.TableChecks(ctx, req.Table, at, judged); err != nil {
			return line, err
		}
	}
	for _, v := range judged {
		fs, ws, err := at.Validate(ctx, v)
		if err != nil {
			return line, err
		}
		for _, w := range ws.List {
			warned = append(warned, "check written warn: "+w.String())
		}
		key := c.Partition.Key(v)
		var its []verify.Finding
		for _, f := range more {
			if f.Partition == key {
				its = append(its, f)
			}
		}
		if n := fs.Len() + int64(len(its)); n > 0 {
			total += n
			first := append(fs.List, its...)[0]
			bad = append(bad, fmt.Sprintf("%s: %s", verify.DisplayKey(key), first.Message))
		}
	}
	partitions := len(bad)
	// A finding of no partition (an assertion's, over every row judged).
	for _, f := range more {
		if f.Partition == "" {
			total++
			bad = append(bad, f.Message)
		}
	}
	what := describeContract(c)
	if len(bad) > 0 {
		line.Message = fmt.Sprintf("%s of %s break%s the table's contract (%s), %s in all; the first: %s",
			words.Count(partitions, "partition"), words.Number(len(judged)), map[bool]string{true: "s", false: ""}[partitions == 1], what, words.Count(total, "finding"), strings.Join(bad[:min(len(bad), 3)], "; "))
		if partitions == 0 {
			line.Message = fmt.Sprintf("%s break%s the table's contract (%s): %s", partitionsNamed(c, judged), map[bool]string{true: "s", false: ""}[len(judged) == 1], what, strings.Join(bad[:min(len(bad), 3)], "; "))
		}
		return line, nil
	}
	line.OK = true
	line.Message = fmt.Sprintf("%s keep%s the table's contract (%s)", partitionsNamed(c, judged), map[bool]string{true: "s", false: ""}[len(judged) == 1], what)
	if len(warned) > 0 {
		line.Message += fmt.Sprintf("; %s: %s", words.Count(len(warned), "warning"), strings.Join(warned[:min(len(warned), 3)], "; "))
	}
	return line, nil
}

// partitionsNamed names the partitions judged: one by its key, more by
// their count.
func partitionsNamed(c *contract.Contract, values []string) string {
	if len(values) == 1 {
		return "partition " + verify.DisplayKey(c.Partition.Key(values[0]))
	}
	return words.Count(len(values), "partition")
}

// describeContract says what a partition's rows are judged on.
func describeContract(c *contract.Contract) string {
	var parts []string
	if len(c.Grain) > 0 {
		parts = append(parts, "grain")
	}
	for i := range c.Fields {
		if c.Fields[i].Required {
			parts = append(parts, "required columns")
			break
		}
	}
	var checks []string
	for i, cs := range c.Checks {
		for _, ch := range cs {
			checks = append(checks, c.Fields[i].Name+" "+string(ch))
		}
	}
	slices.Sort(checks)
	if len(checks) > 0 {
		parts = append(parts, "checks "+strings.Join(checks, ", "))
	}
	if len(c.Assertions) > 0 {
		var names []string
		for _, a := range c.Assertions {
			names = append(names, a.Name)
		}
		parts = append(parts, "assertions "+strings.Join(names, ", "))
	}
	if len(parts) == 0 {
		return "nothing declared"
	}
	return strings.Join(parts, "; ")
}

// freshness judges the age of the newest partition, where its field names
// a period, else of the last commit.
func freshness(meta table.Metadata, c *contract.Contract, values []string, now time.Time, maxAge time.Duration) CheckLine {
	line := CheckLine{Name: "freshness"}
	if c.Partition.One() && len(values) > 0 {
		f := c.Partition.Fields[0]
		newest := values[len(values)-1]
		if ends, ok := f.Ends(c.Arrow.Field(f.Column).Type, newest); ok {
			age := now.Sub(ends)
			line.OK = age <= maxAge
			line.Message = fmt.Sprintf("newest partition %s ended %s ago (at most %s)", c.Partition.Key(newest), roundAge(age), roundAge(maxAge))
			return line
		}
	}
	head := meta.CurrentSnapshot()
	age := now.Sub(time.UnixMilli(head.TimestampMs))
	line.OK = age <= maxAge
	line.Message = fmt.Sprintf("last commit, snapshot %d, was %s ago (at most %s)", head.SnapshotID, roundAge(age), roundAge(maxAge))
	return line
}

// roundAge writes an age as a person reads it: 3d 4h, 5h 12m, 40s.
func roundAge(d time.Duration) string {
	switch {
	case d < 0:
		return "-" + roundAge(-d)
	case d >= 48*time.Hour:
		return fmt.Sprintf("%dd %dh", int(d/(24*time.Hour)), int(d%(24*time.Hour)/time.Hour))
	case d >= time.Hour:
		return fmt.Sprintf("%dh %dm", int(d/time.Hour), int(d%time.Hour/time.Minute))
	}
	return d.Round(time.Second).String()
}

// volume judges the newest partition's rows and additive sums against the
// mean of the trailing partitions before it.
func volume(ctx context.Context, at *snapshot.At, values []string, band contract.Band, trailing int) (CheckLine, error) {
	line := CheckLine{Name: "volume"}
	if trailing <= 0 {
		trailing = 7
	}
	if len(values) < 2 {
		line.OK = true
		line.Message = fmt.Sprintf("the table holds %s: nothing to compare the newest with", words.Count(len(values), "partition"))
		return line, nil
	}
	newest := values[len(values)-1]
	before := values[max(0, len(values)-1-trailing) : len(values)-1]
	now, err := at.Fingerprint(ctx, newest)
	if err != nil {
		return line, err
	}
	var rows int64
	sums := map[string]exact.Sum{}
	for _, v := range before {
		fp, err := at.Fingerprint(ctx, v)
		if err != nil {
			return line, err
		}
		rows += fp.Rows
		for k, s := range fp.Sums {
			sums[k] = sums[k].Add(s)
		}
	}
	n := float64(len(before))
	var outside []string
	scales := at.Contract.Summary().Scales
	judge := func(what string, total, got exact.Sum) {
		scale := scales[what]
		mean := total.Float64() / n
		ratio := got.Float64() / mean
		ok := mean != 0 && ratio >= band.Lo && ratio <= band.Hi || mean == 0 && got.Sign() == 0
		if !ok {
			outside = append(outside, fmt.Sprintf("%s %s against a mean of %s (%.2fx)", what, words.Grouped(got.Scaled(scale)), words.Grouped(strconv.FormatFloat(mean/math.Pow10(scale), 'f', -1, 64)), ratio))
		}
	}
	judge("rows", exact.Of(rows), exact.Of(now.Rows))
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range sums {
			if !yield(k) {
				return
			}
		}
	}) {
		judge(k, sums[k], now.Sums[k])
	}
	key := at.Contract.Partition.Key(newest)
	if len(outside) > 0 {
		line.Message = fmt.Sprintf("newest partition %s is outside %s of the %s before it: %s", key, band, words.Number(len(before)), strings.Join(outside, "; "))
		return line, nil
	}
	line.OK = true
	line.Message = fmt.Sprintf("newest partition %s, %s, within %s of the mean of the %s before it (%s rows)", key, words.Count(now.Rows, "row"), band, words.Number(len(before)), words.Grouped(strconv.FormatFloat(float64(rows)/n, 'f', 1, 64)))
	return line, nil
}

// lastRunVerified verifies the newest run main holds.
func (a Auditor) lastRunVerified(ctx context.Context, ident table.Identifier, meta table.Metadata) CheckLine {
	line := CheckLine{Name: "last run verified"}
	head := meta.CurrentSnapshot()
	for _, s := range table.AncestorsOf(head.SnapshotID, meta.SnapshotByID) {
		if s.Summary == nil || s.Summary.Properties[runrecord.PropRunID] == "" {
			continue
		}
		res, err := a.VerifyRun(ctx, ident, "", s.SnapshotID)
		switch {
		case res != nil && res.OK:
			line.OK = true
			line.Message = fmt.Sprintf("run %s, snapshot %d, fingerprints as it recorded (%s)", res.RunID, s.SnapshotID, verify.Short(res.Recorded))
		case res != nil:
			line.Message = fmt.Sprintf("run %s, snapshot %d, fingerprints %s now, recorded %s", res.RunID, s.SnapshotID, res.Computed[:12], verify.Short(res.Recorded))
		default:
			line.Message = fmt.Sprintf("snapshot %d could not be verified: %v", s.SnapshotID, err)
		}
		return line
	}
	line.Message = "main holds no run of lakeswap's"
	return line
}
