//go:build !noduckdb

package source

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
)

// TestParseDate: the engine path's quick date reader takes exactly what
// time.Parse takes as a date, with the same day, and passes anything else
// to the general reader.
func TestParseDate(t *testing.T) {
	for _, s := range []string{"2026-01-01", "2024-02-29", "2026-02-29", "2026-04-31", "0000-01-01", "9999-12-31",
		"1969-12-31", "2026-13-01", "2026-00-10", "2026-01-00", "2026-1-01", "+026-01-01", "2026-01-0a", "2026/01/01", "", "2026-01-01 "} {
		got, ok := parseDate(s)
		want, err := time.Parse(time.DateOnly, s)
		if ok && (err != nil || got != arrow.Date32FromTime(want)) {
			t.Errorf("parseDate(%q) = %v, want time.Parse's %v (err %v)", s, got, want, err)
		}
		if !ok && err == nil && len(s) == 10 {
			t.Errorf("parseDate(%q) refused a date time.Parse takes", s)
		}
	}
}

// TestIdleEngineTakesTheNextReadsShare: an engine a read left is used by
// the next read with that read's memory and spill folder, not the first's.
func TestIdleEngineTakesTheNextReadsShare(t *testing.T) {
	first, next := t.TempDir(), t.TempDir()
	e, err := readerEngine(first, 256<<20)
	if err != nil {
		t.Fatal(err)
	}
	e.release()
	again, err := readerEngine(next, 512<<20)
	if err != nil {
		t.Fatal(err)
	}
	if again != e {
		t.Fatal("the next read opened a new engine; want the idle one")
	}
	// A boolean, as this reader hands strings over in the engine's own form.
	for _, q := range []string{"current_setting('temp_directory') = " + sqlString(next), "current_setting('memory_limit') = '512.0 MiB'",
		"current_setting('extension_directory') = " + sqlString(filepath.Join(next, "extensions"))} {
		rr, err := again.query(t.Context(), "SELECT "+q)
		if err != nil {
			t.Fatal(err)
		}
		if !rr.Next() {
			t.Fatal(rr.Err())
		}
		got := rr.RecordBatch().Column(0).ValueStr(0)
		rr.Release()
		if got != "true" {
			t.Errorf("%s: %s, want true", q, got)
		}
	}
	// A job's engine is new, never an idle reader's: it is confined for
	// good.
	again.release()
	job, err := OpenSQLEngine(t.TempDir(), 256<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer job.Close()
	if job.e == again {
		t.Error("a job's engine was an idle reader's")
	}
	if e := idleEngine(t.TempDir(), 256<<20); e != again {
		t.Error("the idle engine is not the reader's")
	} else {
		e.close()
	}
}
