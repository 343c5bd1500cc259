package source

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

// readLines reads an NDJSON file line by line, as before it was parsed
// on every core: the reference the parallel reader must match.
func readLines(path string, sc *arrow.Schema) ([]string, error) {
	var out []string
	err := readText(context.Background(), path, sc, newJSONRows, func(b Batch) error {
		out = append(out, batchRows(b)...)
		return nil
	})
	return out, err
}

func batchRows(b Batch) []string {
	var out []string
	for r := range int(b.Rec.NumRows()) {
		var row []string
		for _, c := range b.Rec.Columns() {
			row = append(row, c.(interface{ ValueStr(int) string }).ValueStr(r))
		}
		out = append(out, fmt.Sprintf("%d:%s", b.Line[r], strings.Join(row, "|")))
	}
	return out
}

// TestNDJSONBlocks: a file of many blocks, with blank lines, CRLF line
// ends, escapes and a byte-order mark at the start, reads to the same rows
// on the same lines as line by line; and a refusal deep in it (a line
// starting with a byte-order mark mid-file, which only the file's start
// may have; a line too long; a bad value) names the same line.
func TestNDJSONBlocks(t *testing.T) {
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "day", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "note", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	dir := t.TempDir()
	body := func(bad string, at int) string {
		var b strings.Builder
		b.WriteString("\ufeff")
		for i := range 300_000 {
			switch {
			case i == at:
				b.WriteString(bad + "\n")
			case i%1000 == 7:
				b.WriteString("\n")
			case i%997 == 3:
				fmt.Fprintf(&b, "{\"id\":%d,\"note\":\"tab\\there \\u00e9\",\"day\":null}\r\n", i)
			default:
				fmt.Fprintf(&b, `{"day":"2026-01-%02d","id":%d,"note":"n%d"}`+"\n", 1+i%28, i, i)
			}
		}
		return b.String()
	}
	good := filepath.Join(dir, "good.ndjson")
	if err := os.WriteFile(good, []byte(body("", -1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if info, _ := os.Stat(good); info.Size() < 3*ndjsonBlockBytes {
		t.Fatalf("the file is %d bytes, fewer than three blocks", info.Size())
	}
	want, err := readLines(good, sc)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	err = readNDJSON(context.Background(), good, sc, func(b Batch) error {
		got = append(got, batchRows(b)...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d rows, line by line %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("row %d: %s, line by line %s", i, got[i], want[i])
		}
	}
	for _, c := range []struct {
		name, bad string
		at        int
	}{
		{"a byte-order mark mid-file", "\ufeff{\"id\":1}", 250_123},
		{"a bad value", `{"day":"2026-02-30","id":1}`, 210_000},
		{"a key given twice", `{"id":1,"id":2}`, 123_456},
		{"a line too long", `{"id":1,"note":"` + strings.Repeat("x", maxLine) + `"}`, 100_000},
	} {
		path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".ndjson")
		if err := os.WriteFile(path, []byte(body(c.bad, c.at)), 0o644); err != nil {
			t.Fatal(err)
		}
		_, want := readLines(path, sc)
		got := readNDJSON(context.Background(), path, sc, func(Batch) error { return nil })
		var wi, gi *InputError
		if !errors.As(want, &wi) || !errors.As(got, &gi) || wi.Error() != gi.Error() {
			t.Errorf("%s: %v, line by line %v", c.name, got, want)
		}
	}
}
