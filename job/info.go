package job

import (
	"encoding/json"
	"fmt"
	"maps"

	"github.com/lakeswap/lakeswap/runrecord"
	"github.com/lakeswap/lakeswap/swap"
)

// Info is what a run computed by a SQL job records of it: the job's
// version (the SHA-256 of its file and SQL), the SHA-256 of its sources'
// listing, and the source rows its rules rejected, by reason, with where
// they were written.
type Info struct {
	File         string           `json:"file"`
	Version      string           `json:"version"`
	SourcesHash  string           `json:"sources_sha256"`
	RejectedRows int64            `json:"rejected_rows"`
	Rejected     map[string]int64 `json:"rejected,omitempty"`
	RejectsFile  string           `json:"rejects_file,omitempty"`
	// Reconciled is what the job's reconciliation query said each
	// partition must hold, by partition value.
	Reconciled map[string]swap.Figures `json:"reconciled,omitempty"`
	// Late counts, by the day of their event, the source rows that arrived
	// later than the job's lookback after it (Lookback).
	Late     map[string]int64 `json:"late,omitempty"`
	Lookback float64          `json:"lookback_seconds,omitempty"`
	// Policy is the job's late policy (escalate, restate, current-period)
	// when the run tracks its rows' arrival (a lag source, a lookback, a
	// table by day), with the job's owner and note, for the refusal.
	Policy runrecord.Late `json:"late_policy,omitempty"`
	Owner  string         `json:"late_owner,omitempty"`
	Note   string         `json:"late_note,omitempty"`
	// Escalated are the rows, by the day of their event, that arrived
	// later than the lookback since the previous watermark into partitions
	// already published, and that no decision covers: a partition they
	// change is refused.
	Escalated map[string]LateRows `json:"escalated,omitempty"`
	// Into are the rows, by the day of their event, that arrived later
	// than the lookback since the previous watermark into days of the run
	// not yet published: a late correction may have moved a record out of
	// a published day of the run into one of them, so a published day
	// that changes is judged as if the rows were its own.
	Into map[string]LateRows `json:"late_into_new_days,omitempty"`
	// Pending are the rows, by the day of their event, that arrived later
	// than the lookback since the previous watermark into published days
	// the run does not rebuild: left for the run that does.
	Pending map[string]int64 `json:"late_pending,omitempty"`
	// Decision is what the run does with such rows: restate or leave
	// (--restate, --leave, or the job's policy restate), or the rows the
	// policy current-period loads into the day they arrived.
	Decision *runrecord.LateDecision `json:"late_decision,omitempty"`
	// Undecided is the flag (--restate, --leave) of a run that asked for
	// a decision no late row needed: its reason is not recorded.
	Undecided string `json:"late_undecided,omitempty"`
	// Watermark is the arrival time the run records when it lands
	// (runrecord.PropWatermark), PreviousWatermark the one it started
	// from; Left the days whose late rows stay left out, carried from
	// run to run (runrecord.PropLateLeft).
	Watermark         string                    `json:"watermark,omitempty"`
	PreviousWatermark string                    `json:"previous_watermark,omitempty"`
	Left              map[string]runrecord.Left `json:"late_left,omitempty"`
}

// LateRows are the rows of one day that arrived late: how many, the first
// of their arrivals, and the latest any arrived after its event.
type LateRows struct {
	Rows         int64   `json:"rows"`
	FirstArrival string  `json:"first_arrival"`
	MaxLag       float64 `json:"max_lag_seconds"`
	// Of are the days not yet published the rows are of, for a
	// published day they may have moved a record out of.
	Of []string `json:"of,omitempty"`
}

// Read reads a job's record back from a plan written before: what Apply
// takes as ApplyOptions.Jobs.
func Read(doc json.RawMessage) (swap.Job, error) {
	var info *Info
	if err := json.Unmarshal(doc, &info); err != nil {
		return nil, fmt.Errorf("a job's record: %w", err)
	}
	if info == nil {
		return nil, fmt.Errorf("a job's record is empty")
	}
	if info.Late == nil && info.Lookback > 0 {
		// Counted and none found: JSON leaves the empty count out, and
		// apply records it as publish does.
		info.Late = map[string]int64{}
	}
	return info, nil
}

// InfoOf is the record a plan keeps of the job that computed its rows;
// nil if none did.
func InfoOf(plan *swap.Plan) (*Info, error) {
	if len(plan.Job) == 0 || string(plan.Job) == "null" {
		return nil, nil
	}
	j, err := Read(plan.Job)
	if err != nil {
		return nil, fmt.Errorf("the plan of run %s: %w", plan.RunID, err)
	}
	return j.(*Info), nil
}

// clone copies what judging a run changes: the decision, its days, and
// the days escalated.
func (i *Info) clone() *Info {
	c := *i
	if d := i.Decision; d != nil {
		dc := *d
		dc.Rows = maps.Clone(d.Rows)
		c.Decision = &dc
	}
	c.Escalated = maps.Clone(i.Escalated)
	return &c
}
