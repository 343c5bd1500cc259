package source

// Compressed NDJSON cut short: the block reader refuses it as the line
// reader does, never reading it as a shorter, valid file.

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/klauspost/compress/zstd"
)

var truncatedSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "pad", Type: arrow.BinaryTypes.String, Nullable: true},
}, nil)

func sameAsLineByLine(t *testing.T, path string) {
	t.Helper()
	want, werr := readLines(path, truncatedSchema)
	var got []string
	gerr := readNDJSON(context.Background(), path, truncatedSchema, func(b Batch) error {
		got = append(got, batchRows(b)...)
		return nil
	})
	t.Logf("line by line: %d rows, err %v", len(want), werr)
	t.Logf("blocks:       %d rows, err %v", len(got), gerr)
	if (werr == nil) != (gerr == nil) || len(got) != len(want) {
		t.Errorf("diverge: line by line %d rows err %v; blocks %d rows err %v", len(want), werr, len(got), gerr)
	}
}

// A gzip or zstd NDJSON whose writer flushed after each 100 rows and was
// cut off after 500: refused (unexpected EOF) in blocks as line by line,
// never read as a shorter, valid file.
func TestNDJSONBlocksTruncated(t *testing.T) {
	for _, c := range []struct {
		name string
		open func(io.Writer) (io.WriteCloser, func() error)
	}{
		{"in.ndjson.gz", func(w io.Writer) (io.WriteCloser, func() error) { z := gzip.NewWriter(w); return z, z.Flush }},
		{"in.ndjson.zst", func(w io.Writer) (io.WriteCloser, func() error) { z, _ := zstd.NewWriter(w); return z, z.Flush }},
	} {
		var buf bytes.Buffer
		z, flush := c.open(&buf)
		cut := 0
		for i := range 1000 {
			fmt.Fprintf(z, "{\"id\":%d}\n", i)
			if i%100 == 99 {
				if err := flush(); err != nil {
					t.Fatal(err)
				}
				if i == 499 {
					cut = buf.Len()
				}
			}
		}
		if err := z.Close(); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), c.name)
		if err := os.WriteFile(path, buf.Bytes()[:cut], 0o644); err != nil {
			t.Fatal(err)
		}
		sameAsLineByLine(t, path)
	}
}

// Two gzip members (cat a.gz b.gz), the second cut inside its header.
func TestNDJSONBlocksTruncatedGzipMember(t *testing.T) {
	var buf bytes.Buffer
	for m := range 2 {
		z := gzip.NewWriter(&buf)
		for i := range 100 {
			fmt.Fprintf(z, "{\"id\":%d}\n", m*100+i)
		}
		z.Close()
	}
	first := bytes.Index(buf.Bytes()[10:], []byte{0x1f, 0x8b}) + 10
	path := filepath.Join(t.TempDir(), "in.ndjson.gz")
	if err := os.WriteFile(path, buf.Bytes()[:first+5], 0o644); err != nil {
		t.Fatal(err)
	}
	sameAsLineByLine(t, path)
}

func TestNDJSONBlocksGzipBadChecksum(t *testing.T) {
	var buf bytes.Buffer
	z := gzip.NewWriter(&buf)
	for i := range 1000 {
		fmt.Fprintf(z, "{\"id\":%d}\n", i)
	}
	z.Close()
	b := buf.Bytes()
	b[len(b)-8] ^= 0xff // the CRC-32
	path := filepath.Join(t.TempDir(), "in.ndjson.gz")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, werr := readLines(path, truncatedSchema)
	gerr := readNDJSON(context.Background(), path, truncatedSchema, func(Batch) error { return nil })
	// Both readers refuse the file as an input error naming it and the
	// checksum, however many lines they read before the trailer.
	for name, err := range map[string]error{"line by line": werr, "blocks": gerr} {
		var ie *InputError
		if !errors.As(err, &ie) || ie.File != path || !strings.Contains(err.Error(), "checksum") {
			t.Errorf("%s: %v, want an input error naming %s and the bad checksum", name, err, path)
		}
	}
}
