package stats

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"unicode/utf8"

	"github.com/apache/iceberg-go"
	"github.com/twmb/avro"
	"github.com/twmb/avro/ocf"
)

// rewriteAvro decodes every record of an Avro file, lets patch change it,
// and writes the records again under the file's own schema text, metadata
// (with header's entries in place of its own) and codec: every byte that
// patch leaves alone reads back as it was. Logical types are read as the
// types under them, so that dates, times and decimals in partition values
// go back exactly as written.
func rewriteAvro(data []byte, header map[string][]byte, patch func(rec map[string]any) error) ([]byte, error) {
	var plain *avro.Schema
	rd, err := ocf.NewReader(bytes.NewReader(data), ocf.WithReaderSchemaFunc(func(rd *ocf.Reader) (*avro.Schema, error) {
		s, err := withoutLogicalTypes(string(rd.Metadata()["avro.schema"]))
		plain = s
		return s, err
	}))
	if err != nil {
		return nil, err
	}
	meta := map[string][]byte{}
	for k, v := range rd.Metadata() {
		if k != "avro.schema" && k != "avro.codec" {
			meta[k] = v
		}
	}
	for k, v := range header {
		meta[k] = v
	}
	var codec ocf.Codec
	switch name := string(rd.Metadata()["avro.codec"]); name {
	case "", "null":
	case "deflate":
		codec = ocf.DeflateCodec(-1)
	case "snappy":
		codec = ocf.SnappyCodec()
	case "zstandard":
		if codec, err = ocf.ZstdCodec(nil, nil); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("avro codec %q is not one lakeswap writes again", name)
	}
	opts := []ocf.WriterOpt{ocf.WithSchema(string(rd.Metadata()["avro.schema"])), ocf.WithMetadata(meta)}
	if codec != nil {
		opts = append(opts, ocf.WithCodec(codec))
	}
	var out bytes.Buffer
	w, err := ocf.NewWriter(&out, plain, opts...)
	if err != nil {
		return nil, err
	}
	for {
		var rec map[string]any
		if err := rd.Decode(&rec); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, err
		}
		if err := patch(rec); err != nil {
			return nil, err
		}
		if err := w.Encode(rec); err != nil {
			return nil, err
		}
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// withoutLogicalTypes parses an Avro schema with its logicalType
// attributes left out: the same bytes on the wire, read as plain types.
func withoutLogicalTypes(schema string) (*avro.Schema, error) {
	dec := json.NewDecoder(bytes.NewReader([]byte(schema)))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return nil, err
	}
	var strip func(any)
	strip = func(n any) {
		switch x := n.(type) {
		case map[string]any:
			delete(x, "logicalType")
			for _, v := range x {
				strip(v)
			}
		case []any:
			for _, v := range x {
				strip(v)
			}
		}
	}
	strip(doc)
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	return avro.Parse(string(b))
}

// ListFix is what a manifest list's entry for one manifest becomes.
type ListFix struct {
	Path       string // "" keeps the entry's own
	Length     int64
	Partitions []iceberg.FieldSummary
}

// PatchList rewrites a manifest list: each manifest that fixes names takes
// its fix (a new path and length, and partition summaries), every other
// entry and field stays as written; header replaces entries of the file's
// metadata (a new snapshot's id, parent and sequence number).
func PatchList(data []byte, fixes map[string]ListFix, header map[string][]byte) ([]byte, error) {
	return rewriteAvro(data, header, func(rec map[string]any) error {
		path, _ := rec["manifest_path"].(string)
		fix, ok := fixes[path]
		if !ok {
			return nil
		}
		if fix.Path != "" {
			rec["manifest_path"], rec["manifest_length"] = fix.Path, fix.Length
		}
		if fix.Partitions != nil {
			list := make([]any, len(fix.Partitions))
			for i, s := range fix.Partitions {
				f := map[string]any{"contains_null": s.ContainsNull, "contains_nan": nil, "lower_bound": nil, "upper_bound": nil}
				if s.ContainsNaN != nil {
					f["contains_nan"] = *s.ContainsNaN
				}
				if s.LowerBound != nil {
					f["lower_bound"] = append([]byte{}, *s.LowerBound...)
				}
				if s.UpperBound != nil {
					f["upper_bound"] = append([]byte{}, *s.UpperBound...)
				}
				list[i] = f
			}
			rec["partitions"] = list
		}
		return nil
	})
}

// Metrics are a data file's corrected figures for some of its columns: a
// column named here takes these in place of what its entry recorded.
type Metrics map[int]ColumnMetrics

// ColumnMetrics are one column's corrected figures; a nil bound removes it.
type ColumnMetrics struct {
	Values, Nulls, NaNs int64
	NaNCounted          bool // whether the entry records a NaN count
	Lower, Upper        []byte
}

// Corrected is what a column's entry should record, from its rows: exact
// counts, and bounds that hold every value (strings and binaries cut to
// 16 characters or bytes, as Iceberg's default metrics do, the upper one
// raised to stay above every value; dropped where no such bound exists).
func Corrected(c *Column) ColumnMetrics {
	m := ColumnMetrics{Values: c.Values, Nulls: c.Nulls, NaNs: c.NaNs}
	switch c.Type.(type) {
	case iceberg.Float32Type, iceberg.Float64Type:
		m.NaNCounted = true
	}
	if c.Min == nil {
		return m
	}
	// A float column's zero bounds hold both zeros, as lakeswap writes
	// them (WidenZeros).
	low, high := c.Min, c.Max
	if f, ok := low.(float64); ok && f == 0 {
		low = math.Copysign(0, -1)
	}
	if f, ok := high.(float64); ok && f == 0 {
		high = 0.0
	}
	lo, err1 := bound(c.Type, low)
	hi, err2 := bound(c.Type, high)
	if err1 != nil || err2 != nil {
		return m
	}
	switch c.Type.(type) {
	case iceberg.StringType:
		lo, hi = truncateString(lo, false), truncateString(hi, true)
	case iceberg.BinaryType:
		lo, hi = truncateBytes(lo, false), truncateBytes(hi, true)
	}
	if lo != nil {
		m.Lower = append([]byte{}, lo...)
	}
	if hi != nil {
		m.Upper = append([]byte{}, hi...)
	}
	return m
}

const truncateLength = 16

// truncateString cuts a string bound to 16 code points; an upper bound has
// its last one raised so that it stays above the value (nil when none
// can be).
func truncateString(b []byte, upper bool) []byte {
	if utf8.RuneCount(b) <= truncateLength {
		return b
	}
	r := []rune(string(b))[:truncateLength]
	if !upper {
		return []byte(string(r))
	}
	for i := len(r) - 1; i >= 0; i-- {
		next := r[i] + 1
		if next >= 0xD800 && next <= 0xDFFF {
			next = 0xE000
		}
		if next <= utf8.MaxRune {
			r[i] = next
			return []byte(string(r[:i+1]))
		}
	}
	return nil
}

// truncateBytes is truncateString for binaries, by bytes.
func truncateBytes(b []byte, upper bool) []byte {
	if len(b) <= truncateLength {
		return b
	}
	out := append([]byte{}, b[:truncateLength]...)
	if !upper {
		return out
	}
	for i := len(out) - 1; i >= 0; i-- {
		if out[i] < 0xFF {
			out[i]++
			return out[:i+1]
		}
	}
	return nil
}

// PatchManifest rewrites a manifest with the corrected figures of its
// files (by path); every other entry, field and partition value stays as
// written, statuses and sequence numbers included.
func PatchManifest(data []byte, fixes map[string]Metrics) ([]byte, error) {
	return rewriteAvro(data, nil, func(rec map[string]any) error {
		df, ok := rec["data_file"].(map[string]any)
		if !ok {
			return fmt.Errorf("manifest entry has no data_file")
		}
		path, _ := df["file_path"].(string)
		fix, ok := fixes[path]
		if !ok {
			return nil
		}
		for id, m := range fix {
			setCount(df, "value_counts", id, &m.Values)
			setCount(df, "null_value_counts", id, &m.Nulls)
			if m.NaNCounted {
				setCount(df, "nan_value_counts", id, &m.NaNs)
			}
			setBound(df, "lower_bounds", id, m.Lower)
			setBound(df, "upper_bounds", id, m.Upper)
		}
		return nil
	})
}

// setCount sets a column's entry of a count map (an Avro array of
// key-value records), adding the map where the file had none.
func setCount(df map[string]any, field string, id int, n *int64) {
	setPair(df, field, id, *n, true)
}

// setBound sets a column's bound, or removes it for nil.
func setBound(df map[string]any, field string, id int, b []byte) {
	if b == nil {
		setPair(df, field, id, nil, false)
		return
	}
	setPair(df, field, id, append([]byte{}, b...), true)
}

func setPair(df map[string]any, field string, id int, v any, keep bool) {
	if _, ok := df[field]; !ok {
		return // a v1 manifest of fewer fields
	}
	list, _ := df[field].([]any)
	out := list[:0:0]
	found := false
	for _, e := range list {
		kv, _ := e.(map[string]any)
		if k, ok := kv["key"].(int32); ok && int(k) == id {
			found = true
			if keep {
				out = append(out, map[string]any{"key": k, "value": v})
			}
			continue
		}
		out = append(out, e)
	}
	if !found && keep {
		out = append(out, map[string]any{"key": int32(id), "value": v})
	}
	if len(out) == 0 && list == nil {
		return
	}
	df[field] = out
}
