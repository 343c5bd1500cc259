package main

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lakeswap/lakeswap/testenv"
)

// tmuxSession runs a shell command in a detached tmux session of the
// given width, as a person's terminal; screen reads what it shows. The
// shell outlives a Ctrl-C of its command (it traps SIGINT; the command
// gets it as usual), to say how the command exited.
type tmuxSession struct {
	t    *testing.T
	sock string // the test's own tmux server
}

func newTmux(t *testing.T, width int, command string) *tmuxSession {
	t.Helper()
	testenv.Tool(t, "tmux")
	s := &tmuxSession{t: t, sock: filepath.Join(t.TempDir(), "tmux.sock")}
	sock := s.sock
	out, err := exec.Command("tmux", "-S", sock, "new-session", "-d", "-s", "lakeswap", "-x", fmt.Sprint(width), "-y", "40", "sh", "-c", "trap : INT; "+command+"; echo EXIT $?; sleep 600").CombinedOutput()
	if err != nil {
		t.Fatalf("tmux: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("tmux", "-S", sock, "kill-server").Run() })
	for end := time.Now().Add(5 * time.Second); exec.Command("tmux", "-S", sock, "has-session", "-t", "lakeswap").Run() != nil; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(end) {
			out, _ := exec.Command("tmux", "-S", sock, "ls").CombinedOutput()
			t.Fatalf("the tmux session did not start: %s", out)
		}
	}
	return s
}

func (s *tmuxSession) screen() string {
	out, err := exec.Command("tmux", "-S", s.sock, "capture-pane", "-p", "-t", "lakeswap").CombinedOutput()
	if err != nil {
		s.t.Fatalf("tmux capture-pane: %v: %s", err, out)
	}
	return string(out)
}

func (s *tmuxSession) keys(keys ...string) {
	if out, err := exec.Command("tmux", append([]string{"-S", s.sock, "send-keys", "-t", "lakeswap"}, keys...)...).CombinedOutput(); err != nil {
		s.t.Fatalf("tmux send-keys: %v: %s", err, out)
	}
}

// watch captures the screen every 50 ms until it shows EXIT, and returns
// every screen seen, the last one last.
func (s *tmuxSession) watch(timeout time.Duration, each func(string)) []string {
	var screens []string
	for end := time.Now().Add(timeout); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		sc := s.screen()
		screens = append(screens, sc)
		if each != nil {
			each(sc)
		}
		if strings.Contains(sc, "EXIT ") {
			return screens
		}
	}
	s.t.Fatalf("the command did not end in %s; the screen:\n%s", timeout, screens[len(screens)-1])
	return nil
}

// TestProgressInTmux: a 3M-row publish on an 80-column terminal shows the
// read as a percentage of the input's bytes with an ETA, then one line a
// phase (read, stage, compare, commit, verify) with its time, every line
// within the 80 columns. Ctrl-C in the middle of a second publish leaves
// the error on clean lines, no bar half-drawn, and the table as it was.
func TestProgressInTmux(t *testing.T) {
	home := t.TempDir()
	if code, _, errs := cli(t, home, "table", "create", "--schema", write(t, home, "daily_orders.yaml", schemaYAML)); code != 0 {
		t.Fatalf("table create: exit %d: %s", code, errs)
	}
	in := writeNDJSONLines(t, filepath.Join(t.TempDir(), "orders.ndjson"), orderLines(3_000_000, 30))
	bin := lakeswapBinary(t)
	publish := func(runID string) string {
		return fmt.Sprintf("%s --home %s publish --table retail.daily_orders --partitions order_date=2026-01-01..2026-01-30 --run-id %s %s >/dev/null",
			bin, home, runID, in)
	}

	s := newTmux(t, 80, publish("tmux-1"))
	var midRead string
	percent := regexp.MustCompile(`read +[0-9]+ % .*ETA [0-9]`)
	screens := s.watch(5*time.Minute, func(sc string) {
		if midRead == "" && percent.MatchString(sc) {
			midRead = sc
		}
	})
	last := screens[len(screens)-1]
	if midRead == "" {
		t.Errorf("no screen showed the read's percentage and ETA; the last:\n%s", last)
	}
	for _, want := range []string{`(?m)^read +100 % .*3,000,000 rows.* in [0-9.]+m?s`, `(?m)^stage +30/30 partitions .*3,000,000 rows.* in [0-9.]+m?s`,
		`(?m)^compare done in `, `(?m)^commit  done in `, `(?m)^verify  done in `, `(?m)^EXIT 0$`} {
		if !regexp.MustCompile(want).MatchString(last) {
			t.Errorf("the last screen has no line like %s:\n%s", want, last)
		}
	}
	before := metadataLocation(t, home)

	s = newTmux(t, 80, publish("tmux-2"))
	interrupted := false
	screens = s.watch(5*time.Minute, func(sc string) {
		if !interrupted && percent.MatchString(sc) {
			s.keys("C-c")
			interrupted = true
		}
	})
	last = screens[len(screens)-1]
	if !interrupted || !strings.Contains(last, "EXIT 130") {
		t.Fatalf("Ctrl-C during the read: interrupted %v; the last screen:\n%s", interrupted, last)
	}
	var shown []string
	for _, l := range strings.Split(last, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.Contains(l, bin) {
			shown = append(shown, l)
		}
	}
	for _, l := range shown {
		if strings.Contains(l, "%") || strings.Contains(l, "[") || strings.Contains(l, "ETA") {
			t.Errorf("after Ctrl-C a line of the display is left: %q; the screen:\n%s", l, last)
		}
	}
	if !slices.ContainsFunc(shown, func(l string) bool { return strings.HasPrefix(l, "lakeswap: ") && strings.Contains(l, "interrupted") }) {
		t.Errorf("after Ctrl-C no line starts with lakeswap's message that it was interrupted; the screen:\n%s", last)
	}
	if after := metadataLocation(t, home); after != before {
		t.Errorf("the interrupted publish moved the table: %s -> %s", before, after)
	}
}
