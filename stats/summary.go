package stats

import (
	"fmt"

	"github.com/apache/iceberg-go"

	"github.com/lakeswap/lakeswap/verify"
)

// Summary is a manifest's partition field summary as its entries make it.
type Summary struct {
	Field                     iceberg.PartitionField
	Type                      iceberg.Type // the field's, after its transform
	ContainsNull, ContainsNaN bool
	Lower, Upper              value // nil when every value is null or NaN
}

// Summaries computes each partition field's summary from a manifest's
// entries (deleted ones included, as every writer counts them).
func Summaries(spec iceberg.PartitionSpec, schema *iceberg.Schema, entries []iceberg.ManifestEntry) []Summary {
	var out []Summary
	for _, pf := range spec.Fields() {
		s := Summary{Field: pf}
		if src, ok := schema.FindFieldByID(pf.SourceID()); ok {
			s.Type = pf.Transform.ResultType(src.Type)
		}
		for _, e := range entries {
			v, ok := fromLiteral(e.DataFile().Partition()[pf.FieldID])
			switch {
			case !ok:
				s.ContainsNull = true
			case isNaN(v):
				s.ContainsNaN = true
			default:
				if s.Lower == nil || compare(v, s.Lower) < 0 {
					s.Lower = v
				}
				if s.Upper == nil || compare(v, s.Upper) > 0 {
					s.Upper = v
				}
			}
		}
		out = append(out, s)
	}
	return out
}

// FieldSummary is s as a manifest list records it.
func (s Summary) FieldSummary() (iceberg.FieldSummary, error) {
	nan := s.ContainsNaN
	fs := iceberg.FieldSummary{ContainsNull: s.ContainsNull, ContainsNaN: &nan}
	if s.Lower == nil || s.Type == nil {
		return fs, nil
	}
	lo, err := bound(s.Type, s.Lower)
	if err != nil {
		return fs, err
	}
	hi, err := bound(s.Type, s.Upper)
	if err != nil {
		return fs, err
	}
	// An empty value is an empty bound, never a missing one.
	lo, hi = append([]byte{}, lo...), append([]byte{}, hi...)
	fs.LowerBound, fs.UpperBound = &lo, &hi
	return fs, nil
}

// CheckSummaries checks a manifest's partition summaries, as recorded in
// the manifest list, against what its entries make them. A summary that
// leaves out a value is a finding naming the manifest, the field and what
// a query filtering on it would miss.
func CheckSummaries(m iceberg.ManifestFile, exact []Summary) []verify.Finding {
	var out []verify.Finding
	rec := m.Partitions()
	for i, s := range exact {
		if s.Type == nil {
			continue
		}
		find := func(msg string, args ...any) {
			out = append(out, verify.Finding{Kind: verify.KindStatistics, Where: m.FilePath(), Column: s.Field.Name,
				Message: "partition summary: " + fmt.Sprintf(msg, args...)})
		}
		if i >= len(rec) {
			if m.ExistingDataFiles()+m.AddedDataFiles()+m.DeletedDataFiles() > 0 {
				find("missing from the manifest list")
			}
			continue
		}
		r := rec[i]
		if s.ContainsNull && !r.ContainsNull {
			find("says no value is null, but a file of the manifest is in the null partition: a filter %s IS NULL skips the manifest", s.Field.Name)
		}
		if s.ContainsNaN && r.ContainsNaN != nil && !*r.ContainsNaN {
			find("says no value is NaN, but a file of the manifest is in the NaN partition: a filter IS NAN skips the manifest")
		}
		if s.Lower == nil {
			continue
		}
		if r.LowerBound == nil || r.UpperBound == nil {
			find("has no bounds, as if every value were null, but its files hold %s..%s: a filter on %s skips every file of the manifest",
				display(s.Type, s.Lower), display(s.Type, s.Upper), s.Field.Name)
			continue
		}
		if lo, ok := fromBound(s.Type, *r.LowerBound); ok && !isNaN(lo) && compare(lo, s.Lower) > 0 {
			find("lower bound %s, but a file of the manifest is in partition %s: a filter %s = %s skips the manifest",
				display(s.Type, lo), display(s.Type, s.Lower), s.Field.Name, display(s.Type, s.Lower))
		}
		if hi, ok := fromBound(s.Type, *r.UpperBound); ok && !isNaN(hi) && compare(hi, s.Upper) < 0 {
			find("upper bound %s, but a file of the manifest is in partition %s: a filter %s = %s skips the manifest",
				display(s.Type, hi), display(s.Type, s.Upper), s.Field.Name, display(s.Type, s.Upper))
		}
	}
	return out
}
