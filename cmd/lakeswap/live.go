package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
	"golang.org/x/term"
)

// isTerminal reports whether w is a terminal, where a live display belongs.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// liveProgress draws a publish on a terminal as it goes: rows read and
// their rate, then partitions staged with their rows, bytes and rate. It
// is fed through swap.Progress and the reader's callback; the packages
// never draw.
type liveProgress struct {
	w     io.Writer
	p     *mpb.Progress
	read  *mpb.Bar
	start time.Time
	took  atomic.Int64 // the read's duration once it ended

	mu         sync.Mutex
	stage      *mpb.Bar
	partitions int
	rows       atomic.Int64
	bytes      atomic.Int64
	done       bool
}

func newLiveProgress(w io.Writer) *liveProgress {
	l := &liveProgress{w: w, start: time.Now()}
	l.p = mpb.New(mpb.WithOutput(w), mpb.WithWidth(30), mpb.WithRefreshRate(250*time.Millisecond), mpb.WithAutoRefresh())
	l.read = l.p.New(0, mpb.NopStyle(),
		mpb.PrependDecorators(decor.Name("read   ")),
		mpb.AppendDecorators(decor.Any(func(s decor.Statistics) string {
			d := time.Duration(l.took.Load())
			if d == 0 {
				d = time.Since(l.start)
			}
			return fmt.Sprintf("%s rows  %s rows/s", count(s.Current), count(int64(rate(s.Current, d))))
		})))
	return l
}

// Partitions sets how many partitions the run stages.
func (l *liveProgress) Partitions(n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.partitions = n
}

// Read adds rows read from the inputs.
func (l *liveProgress) Read(rows int64) { l.read.IncrInt64(rows) }

func (l *liveProgress) Step(name string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch name {
	case "stage":
		l.took.Store(int64(time.Since(l.start)))
		l.read.SetTotal(-1, true)
		started := time.Now()
		l.stage = l.p.New(int64(l.partitions), mpb.BarStyle(),
			mpb.PrependDecorators(decor.Name("stage  "), decor.CountersNoUnit("%d/%d partitions")),
			mpb.AppendDecorators(decor.Any(func(decor.Statistics) string {
				rows := l.rows.Load()
				return fmt.Sprintf("%s rows  %s  %s rows/s", count(rows), size(l.bytes.Load()), count(int64(rate(rows, time.Since(started)))))
			})))
	case "commit", "rollback":
		l.finishLocked()
		fmt.Fprintf(l.w, "%s...\n", name)
	case "verify":
		fmt.Fprintf(l.w, "%s...\n", name)
	}
}

func (l *liveProgress) Staged(_ string, rows, bytes int64) {
	l.rows.Add(rows)
	l.bytes.Add(bytes)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stage != nil {
		l.stage.Increment()
	}
}

// Close ends the display, complete or not.
func (l *liveProgress) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.finishLocked()
}

func (l *liveProgress) finishLocked() {
	if l.done {
		return
	}
	l.done = true
	l.read.SetTotal(-1, true)
	if l.stage != nil && !l.stage.Completed() {
		l.stage.Abort(false)
	}
	l.p.Wait()
}

func rate(n int64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

// count writes a number with thousands separators.
func count(n int64) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func size(b int64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
	}
	return fmt.Sprintf("%d KiB", b>>10)
}
