package verify

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Kind classifies a validation finding.
type Kind string

const (
	KindSchema           Kind = "schema"
	KindOutside          Kind = "outside-partitions"
	KindNullGrain        Kind = "null-grain"
	KindNullRequired     Kind = "null-required"
	KindDuplicateGrain   Kind = "duplicate-grain"
	KindEmpty            Kind = "empty-partition"
	KindCheck            Kind = "check"
	KindInput            Kind = "input"
	KindRunID            Kind = "run-id-reused"
	KindAdopt            Kind = "adopt"            // a file another engine wrote that cannot be adopted
	KindImplausible      Kind = "implausible"      // rows or a sum far outside what the partition held
	KindNondeterministic Kind = "nondeterministic" // a second build of the same input gave other rows
	KindMoved            Kind = "moved-records"    // staged keys the table holds in an undeclared partition
	KindPartialPlans     Kind = "partial-plans"    // plans applied together that do not make one run
	KindReconcile        Kind = "reconcile"        // staged figures that differ from the source's own
	KindEarlierSpec      Kind = "earlier-spec"     // a file of an earlier partition spec holding rows of declared partitions
	KindFrozen           Kind = "frozen"           // a change to a partition frozen by the table's lakeswap.freeze-after
	KindLate             Kind = "late"             // a change to a published partition by rows that arrived later than the lookback, undecided
	KindRelease          Kind = "release"          // a release that would leave its tables disagreeing
	KindStatistics       Kind = "statistics"       // a bound or count other engines prune on that leaves out rows the file holds
)

// Finding is one reason a stage cannot be published. Row counts from 1 within
// the partition's input; Where, when known, names the file and line.
type Finding struct {
	Kind      Kind   `json:"kind"`
	Partition string `json:"partition,omitempty"`
	Row       int64  `json:"row,omitempty"`
	Where     string `json:"where,omitempty"`
	Column    string `json:"column,omitempty"`
	Message   string `json:"message"`
}

func (f Finding) String() string {
	var b strings.Builder
	b.WriteString(string(f.Kind))
	if f.Partition != "" {
		fmt.Fprintf(&b, " partition %s", DisplayKey(f.Partition))
	}
	if f.Row > 0 {
		fmt.Fprintf(&b, " row %d", f.Row)
	}
	if f.Where != "" {
		fmt.Fprintf(&b, " (%s)", f.Where)
	}
	if f.Column != "" {
		fmt.Fprintf(&b, " column %s", f.Column)
	}
	b.WriteString(": ")
	b.WriteString(f.Message)
	return b.String()
}

// DisplayKey shows a partition key (column=value, several joined by /) on
// one line of text, in the form --partitions takes back: a value that is
// empty, holds a comma or a quote, or starts or ends with a space is
// double-quoted as in CSV (region="a,b", region=""), so that one key
// cannot read as two; a key holding a control character or an invalid
// byte, which no selector holds, is quoted whole as Go quotes it. A key
// is read as several fields only where every part between slashes is a
// column=value: a value may hold a slash (base64 does).
func DisplayKey(k string) string {
	for _, r := range k {
		if r == utf8.RuneError || !unicode.IsPrint(r) {
			return strconv.Quote(k)
		}
	}
	segs := strings.Split(k, "/")
	for _, seg := range segs {
		if name, _, ok := strings.Cut(seg, "="); !ok || name == "" {
			segs = []string{k}
			break
		}
	}
	for i, seg := range segs {
		name, v, ok := strings.Cut(seg, "=")
		if ok && (v == "" || strings.ContainsAny(v, `,"`) || strings.TrimSpace(v) != v) {
			segs[i] = name + `="` + strings.ReplaceAll(v, `"`, `""`) + `"`
		}
	}
	return strings.Join(segs, "/")
}

// MaxFindings bounds what one partition reports, so that a wholly wrong input
// does not exhaust memory; the count of what was left out is still reported.
const MaxFindings = 100

// Findings collects a partition's findings up to MaxFindings.
type Findings struct {
	List    []Finding
	Dropped int64
}

func (fs *Findings) add(f Finding) {
	if len(fs.List) >= MaxFindings {
		fs.Dropped++
		return
	}
	fs.List = append(fs.List, f)
}

// Len is the number of findings, listed or dropped.
func (fs *Findings) Len() int64 { return int64(len(fs.List)) + fs.Dropped }
