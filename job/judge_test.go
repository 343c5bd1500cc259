package job_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/lakeswap/lakeswap/job"
	"github.com/lakeswap/lakeswap/outcome"
	"github.com/lakeswap/lakeswap/runrecord"
	"github.com/lakeswap/lakeswap/swap"
	"github.com/lakeswap/lakeswap/verify"
)

// part is a staged partition of order_date: rows at the base and staged,
// with content hashes that differ when the rows change.
func part(day string, oldRows, newRows int64) swap.PartitionPlan {
	hash := func(n int64) string { return strings.Repeat("a", int(n%7)+1) }
	return swap.PartitionPlan{Value: day, Key: "order_date=" + day,
		OldFingerprint: verify.Fingerprint{Rows: oldRows, Hash: hash(oldRows)},
		Fingerprint:    verify.Fingerprint{Rows: newRows, Hash: hash(newRows)}}
}

// TestPlanKeepsAnEmptyLateCount: a job run that counted its late rows and
// found none reads back from its plan file with the count, empty, so that
// apply records lakeswap.late as publish does.
func TestPlanKeepsAnEmptyLateCount(t *testing.T) {
	file := filepath.Join(t.TempDir(), "p.json")
	doc, err := json.Marshal(&job.Info{Late: map[string]int64{}, Lookback: 172800})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := swap.WritePlan(file, &swap.Plan{RunID: "r", Table: "retail.orders_fact", Job: doc}); err != nil {
		t.Fatal(err)
	}
	pf, err := swap.ReadPlan(file)
	if err != nil {
		t.Fatal(err)
	}
	info, err := job.InfoOf(pf.Plan)
	if err != nil || info == nil || info.Late == nil {
		t.Errorf("the plan file lost the empty late count: %+v, %v", info, err)
	}
}

// TestJudgeLateLeavesTheJobAsItWas: the guard's verdict is a value: the
// job judged is a new one, the one given unchanged, so that shards and
// batches forked from one plan never see another's judgement.
func TestJudgeLateLeavesTheJobAsItWas(t *testing.T) {
	info := &job.Info{Policy: runrecord.LateEscalate, Lookback: 172800,
		Decision: &runrecord.LateDecision{Decision: runrecord.LateRestate, Reason: "till late", DecidedBy: "ana", Rows: map[string]int64{"2026-01-01": 2, "2026-01-02": 1}},
		Into:     map[string]job.LateRows{"2026-01-05": {Rows: 3, FirstArrival: "2026-01-06T00:00:00Z", MaxLag: 3600}}}
	before, _ := json.Marshal(info)
	parts := []swap.PartitionPlan{part("2026-01-01", 4, 5), part("2026-01-02", 3, 3), part("2026-01-03", 2, 6)}

	next, v := info.JudgeLate(parts)
	after, _ := json.Marshal(info)
	if string(before) != string(after) {
		t.Errorf("judging changed the job given:\n%s\nnow\n%s", before, after)
	}
	got := next.(*job.Info)
	// 2026-01-02 comes out the same: it restates nothing. 2026-01-03,
	// published and changing while late rows arrived into a new day, is
	// restated with them.
	want := map[string]int64{"2026-01-01": 2, "2026-01-03": 3}
	if !reflect.DeepEqual(got.Decision.Rows, want) {
		t.Errorf("decision rows %v, want %v", got.Decision.Rows, want)
	}
	if v.By != "--restate" || v.Reason != "till late" || len(v.Findings) != 0 || len(v.Left) != 0 {
		t.Errorf("verdict %+v: want overridden by --restate, no finding, nothing left", v)
	}
	if len(v.Warnings) != 2 || !strings.Contains(v.Warnings[0], "partition order_date=2026-01-01") || !strings.Contains(v.Warnings[1], "order_date=2026-01-03") {
		t.Errorf("warnings %q: want one allowed for each day restated", v.Warnings)
	}
}

// TestJudgeLateEscalates: with no decision, a published day that changes
// with late rows of its own is refused, naming the owner; one that does
// not change is not.
func TestJudgeLateEscalates(t *testing.T) {
	info := &job.Info{Policy: runrecord.LateEscalate, Lookback: 172800, Owner: "finance", PreviousWatermark: "2026-01-04T00:00:00Z",
		Escalated: map[string]job.LateRows{"2026-01-01": {Rows: 2, FirstArrival: "2026-01-05T00:00:00Z", MaxLag: 4 * 86400}, "2026-01-02": {Rows: 1}}}
	_, v := info.JudgeLate([]swap.PartitionPlan{part("2026-01-01", 4, 5), part("2026-01-02", 3, 3)})
	if len(v.Findings) != 1 || v.Findings[0].Partition != "order_date=2026-01-01" || v.Findings[0].Kind != verify.KindLate ||
		!strings.Contains(v.Findings[0].Message, "lookback of 2d") || !strings.Contains(v.Findings[0].Message, "finance") || v.By != "" {
		t.Errorf("verdict %+v: want one late finding for 2026-01-01 naming the lookback and the owner, no override", v)
	}
}

// TestJoinShards: shards that decided late rows apart are refused, as the
// run records one decision; shards that agree join their days, and a day
// one shard left pending that another rebuilds is pending no more.
func TestJoinShards(t *testing.T) {
	leave := func(reason string, days ...string) *job.Info {
		rows := map[string]int64{}
		for _, d := range days {
			rows[d] = 1
		}
		return &job.Info{Policy: runrecord.LateEscalate, Watermark: "2026-01-09T00:00:00Z",
			Decision: &runrecord.LateDecision{Decision: runrecord.LateLeave, Reason: reason, DecidedBy: "ana", Rows: rows}}
	}
	if _, err := leave("kept as reported", "2026-01-01").JoinShard(leave("the till was late", "2026-01-02"), nil); err == nil ||
		!strings.Contains(err.Error(), "decide late rows differently") || !strings.Contains(err.Error(), "the till was late") {
		t.Errorf("shards decided apart joined: %v", err)
	}
	a, b := leave("kept", "2026-01-01"), leave("kept", "2026-01-02")
	a.Pending = map[string]int64{"2026-01-02": 4, "2026-01-07": 1}
	b.Watermark = "2026-01-08T00:00:00Z"
	j, err := a.JoinShard(b, []swap.PartitionPlan{part("2026-01-01", 1, 1), part("2026-01-02", 1, 1)})
	if err != nil {
		t.Fatal(err)
	}
	m := j.(*job.Info)
	if !reflect.DeepEqual(m.Decision.Rows, map[string]int64{"2026-01-01": 1, "2026-01-02": 1}) || !reflect.DeepEqual(m.Pending, map[string]int64{"2026-01-07": 1}) || m.Watermark != "2026-01-08T00:00:00Z" {
		t.Errorf("joined %+v (decision %v): want both days decided, 2026-01-07 pending, the earlier watermark", m, m.Decision.Rows)
	}
	if len(a.Decision.Rows) != 1 || len(a.Pending) != 2 {
		t.Errorf("joining changed the first shard's job: %+v", a)
	}
}

// TestRecordOfABatch: a batch records the decision as far as its own
// partitions go, and only the run's last batch the watermark.
func TestRecordOfABatch(t *testing.T) {
	info := &job.Info{Version: "v", Policy: runrecord.LateEscalate, Watermark: "2026-01-09T00:00:00Z",
		Decision: &runrecord.LateDecision{Decision: runrecord.LateRestate, Reason: "r", Rows: map[string]int64{"2026-01-01": 2, "2026-01-03": 1}}}
	var first, last runrecord.Record
	info.Record(&first, []swap.PartitionPlan{part("2026-01-01", 1, 2), part("2026-01-02", 1, 2)}, false)
	info.Record(&last, []swap.PartitionPlan{part("2026-01-03", 1, 2)}, true)
	if d := first.LateDecision; d == nil || !reflect.DeepEqual(d.Rows, map[string]int64{"2026-01-01": 2}) || !reflect.DeepEqual(d.Partitions, []string{"order_date=2026-01-01"}) || first.Watermark != "" || first.LateLeft != nil {
		t.Errorf("first batch records %+v (decision %+v): want 2026-01-01's share and no watermark", first, first.LateDecision)
	}
	if last.Watermark != info.Watermark || last.LateLeft == nil || last.JobVersion != "v" {
		t.Errorf("last batch records %+v: want the watermark, the days left out (none) and the job's version", last)
	}
}

// TestApplyWithoutAJobReader: a plan a job computed carries its record of
// late rows, which swap does not read: applying it without package job's
// reader is refused before anything is loaded.
func TestApplyWithoutAJobReader(t *testing.T) {
	doc, _ := json.Marshal(&job.Info{Policy: runrecord.LateEscalate})
	plan := &swap.Plan{RunID: "r", Attempt: "a", Table: "retail.orders_fact", Job: doc}
	_, err := (&swap.Publisher{}).Apply(context.Background(), swap.ApplyOptions{}, plan)
	if !errors.Is(err, outcome.ErrInvalidRequest) || !strings.Contains(err.Error(), "computed by a SQL job") {
		t.Errorf("apply without a job reader: %v; want an invalid request naming the job", err)
	}
	if _, err := (&swap.Publisher{}).BindRelease(context.Background(), swap.ApplyOptions{}, []*swap.Plan{plan}); !errors.Is(err, outcome.ErrInvalidRequest) {
		t.Errorf("a release's plan bound without a job reader: %v; want an invalid request", err)
	}
}
