package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vbauerster/cupwriter"
	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
	"golang.org/x/term"

	"github.com/lakeswap/lakeswap/internal/words"
)

// isTerminal reports whether w is a terminal, where a live display belongs.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// liveProgress draws a publish on a terminal as it goes: the read, as
// bytes of the inputs with their percentage and an ETA where their size is
// known, and rows and their rate; then partitions staged with their rows,
// bytes and rate; then a line for each later phase (compare, commit,
// verify) with the time it took. It is fed through swap.Progress and the
// reader's callbacks; the packages never draw. A display stopped before
// its end is cleared, so that a message after it starts on a clean line.
type liveProgress struct {
	w     io.Writer
	p     *mpb.Progress
	read  *mpb.Bar
	start time.Time
	took  atomic.Int64 // the read's duration once it ended
	rowsR atomic.Int64 // rows read
	total int64        // bytes of the inputs, 0 if unknown

	mu         sync.Mutex
	stage      *mpb.Bar
	partitions int
	rows       atomic.Int64
	bytes      atomic.Int64
	done       bool
	phase      string // the phase after the bars, printed when it ends
	phaseAt    time.Time
}

func newLiveProgress(w io.Writer) *liveProgress {
	l := &liveProgress{w: w, start: time.Now()}
	out := mpb.WithOutput(w)
	if f, ok := w.(*os.File); ok {
		// Each frame is drawn from the start of its line: a ^C the
		// terminal echoed moves the cursor two columns on, and a frame
		// drawn from there is shifted by as much, wraps, and leaves a
		// line behind that the display no longer counts.
		cw := cupwriter.New(lineStart{w}, false)
		cw.SetTermFd(int(f.Fd()))
		out = mpb.WithConsoleWriter(cw)
	}
	l.p = mpb.New(out, mpb.WithWidth(24), mpb.WithRefreshRate(250*time.Millisecond), mpb.WithAutoRefresh())
	return l
}

// lineStart writes each frame of the display from the start of a line.
type lineStart struct{ w io.Writer }

func (l lineStart) Write(p []byte) (int, error) {
	if _, err := l.w.Write(append([]byte{'\r'}, p...)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Size sets the inputs' bytes in all, before the read; 0 leaves the
// read shown by its rows alone.
func (l *liveProgress) Size(total int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sizeLocked(total)
}

func (l *liveProgress) sizeLocked(total int64) {
	l.total = total
	rows := decor.Any(func(s decor.Statistics) string {
		d := time.Duration(l.took.Load())
		if d == 0 {
			d = time.Since(l.start)
		}
		return fmt.Sprintf("%s rows  %s rows/s", words.Number(l.rowsR.Load()), words.Number(int64(rate(l.rowsR.Load(), d))))
	})
	if total <= 0 {
		l.read = l.p.New(0, mpb.NopStyle(), mpb.PrependDecorators(decor.Name("read   ")), mpb.AppendDecorators(rows))
		return
	}
	l.read = l.p.New(total, mpb.BarStyle(),
		mpb.PrependDecorators(decor.Name("read   "), decor.Percentage(decor.WCSyncSpace)),
		mpb.AppendDecorators(
			decor.Any(func(s decor.Statistics) string { return size(s.Current) + "/" + size(s.Total) + "  " }),
			rows,
			decor.Any(func(s decor.Statistics) string {
				if s.Completed || s.Aborted {
					return "  in " + time.Duration(l.took.Load()).Round(100*time.Millisecond).String()
				}
				return "  ETA " + eta(s.Current, s.Total, time.Since(l.start))
			})))
}

// Read adds rows read, and says how far through the inputs' bytes the
// read is.
func (l *liveProgress) Read(rows, bytes int64) {
	l.rowsR.Add(rows)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.read == nil { // no size was given: rows alone
		l.sizeLocked(0)
	}
	if l.total > 0 {
		l.read.SetCurrent(min(bytes, l.total))
	} else {
		l.read.IncrInt64(rows)
	}
}

// Partitions sets how many partitions the run stages.
func (l *liveProgress) Partitions(n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.partitions = n
}

func (l *liveProgress) Step(name string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done && name != "rollback" && name != "commit" && name != "verify" && name != "compare" {
		return
	}
	switch name {
	case "plan":
		l.endReadLocked()
	case "stage":
		l.endReadLocked()
		started := time.Now()
		l.stage = l.p.New(int64(l.partitions), mpb.BarStyle(),
			mpb.PrependDecorators(decor.Name("stage  "), decor.CountersNoUnit("%d/%d partitions")),
			mpb.AppendDecorators(decor.Any(func(s decor.Statistics) string {
				rows := l.rows.Load()
				took := time.Since(started)
				if s.Completed {
					return fmt.Sprintf("%s rows  %s  in %s", words.Number(rows), size(l.bytes.Load()), took.Round(100*time.Millisecond))
				}
				return fmt.Sprintf("%s rows  %s  %s rows/s", words.Number(rows), size(l.bytes.Load()), words.Number(int64(rate(rows, took))))
			})))
	default: // compare, commit, verify, rollback
		l.finishLocked(false)
		l.endPhaseLocked()
		l.phase, l.phaseAt = name, time.Now()
		fmt.Fprintf(l.w, "%-7s...\r", name)
	}
}

// endReadLocked completes the read's display, at the bytes it read.
func (l *liveProgress) endReadLocked() {
	if l.took.Load() != 0 {
		return
	}
	l.took.Store(int64(time.Since(l.start)))
	if l.read == nil {
		return
	}
	if l.total > 0 {
		l.read.SetCurrent(l.total)
	}
	l.read.SetTotal(-1, true)
}

// endPhaseLocked prints the phase that ran after the bars, done.
func (l *liveProgress) endPhaseLocked() {
	if l.phase != "" {
		fmt.Fprintf(l.w, "%-7s done in %s\n", l.phase, time.Since(l.phaseAt).Round(10*time.Millisecond))
		l.phase = ""
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

// Close ends the display. A run that ended normally keeps its lines; one
// stopped part-way (an error, Ctrl-C) has its unfinished bars and phase
// cleared, so that what is printed next starts on a clean line.
func (l *liveProgress) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.finishLocked(true)
	if l.phase != "" {
		fmt.Fprint(l.w, "\r\033[K") // the phase line that did not end
		l.phase = ""
	}
}

// End ends the display of a run that finished: its last phase done.
func (l *liveProgress) End() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.finishLocked(false)
	l.endPhaseLocked()
}

func (l *liveProgress) finishLocked(clear bool) {
	if l.done {
		return
	}
	l.done = true
	if clear {
		// A ^C the terminal echoed moved the cursor off the line's start,
		// where the bars' redraw begins: back to it, so that dropping them
		// clears their lines whole.
		fmt.Fprint(l.w, "\r")
	}
	if l.read != nil && l.took.Load() == 0 {
		l.read.Abort(clear)
	}
	if l.stage != nil && !l.stage.Completed() {
		l.stage.Abort(clear)
	}
	l.p.Wait()
}

// eta is the time left at the rate so far.
func eta(cur, total int64, took time.Duration) string {
	if cur <= 0 || total <= cur {
		return "-"
	}
	left := time.Duration(float64(took) * float64(total-cur) / float64(cur))
	return left.Round(time.Second).String()
}

func rate(n int64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
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
