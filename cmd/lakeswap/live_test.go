package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/lakeswap/lakeswap/swap"
)

// onTerminal runs the binary with its stderr on a pseudo-terminal and
// returns its stdout and what the terminal showed.
func onTerminal(t *testing.T, args ...string) (code int, stdout, terminal string) {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	if err := pty.Setsize(ptmx, &pty.Winsize{Rows: 40, Cols: 120}); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(lakeswapBinary(t), args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, tty
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	shown := make(chan string)
	go func() {
		b, _ := io.ReadAll(ptmx) // ends with EIO once the process is gone
		shown <- string(b)
	}()
	err = cmd.Wait()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, out.String(), <-shown
}

// TestProgressOnATerminal: on a terminal, publish shows rows read and
// partitions staged as it goes; with -o json or --no-progress it shows
// nothing, and stdout is the one JSON object.
func TestProgressOnATerminal(t *testing.T) {
	home := newHome(t)
	in := writeCSVLines(t, filepath.Join(t.TempDir(), "in.csv"), orderLines(50_000, 2))
	publish := []string{"--home", home, "publish", "--allow-implausible", "--table", "retail.daily_orders", "--partitions", twoDays}
	code, _, shown := onTerminal(t, append(publish, "--run-id", "live-1", in)...)
	if code != 0 || !strings.Contains(shown, "read") || !strings.Contains(shown, "50,000 rows") || !strings.Contains(shown, "2/2 partitions") {
		t.Errorf("exit %d; the terminal showed no progress:\n%q", code, shown)
	}
	for _, extra := range [][]string{{"-o", "json"}, {"--no-progress"}} {
		args := append(append([]string{}, publish...), extra...)
		code, out, shown := onTerminal(t, append(args, "--run-id", "live-"+extra[0], in)...)
		if code != 0 || strings.Contains(shown, "rows/s") || strings.Contains(shown, "partitions") {
			t.Errorf("%v: exit %d; the terminal showed progress:\n%q", extra, code, shown)
		}
		if extra[0] == "-o" {
			var v map[string]any
			if err := json.Unmarshal([]byte(out), &v); err != nil {
				t.Errorf("-o json stdout is not one JSON object: %v\n%s", err, out)
			}
		}
	}
}

// TestApplyAtATerminal: at a terminal, apply shows the plan's summary and
// asks for its id; a wrong id typed in is refused with the table
// unchanged, the right one commits.
func TestApplyAtATerminal(t *testing.T) {
	home := newHome(t)
	plan := filepath.Join(t.TempDir(), "plan.json")
	if code, _, errs := cli(t, home, "plan", "--table", "retail.daily_orders", "--partitions", twoDays, "--out", plan, batch2Input(t)); code != 0 {
		t.Fatalf("plan: exit %d: %s", code, errs)
	}
	pf, err := swap.ReadPlan(plan)
	if err != nil {
		t.Fatal(err)
	}
	before := mainOf(t, home)
	for i, typed := range [][]string{{"0123456789ab", ""}, {"0123456789ab", pf.PlanID[:12]}} {
		code, screen := typeAt(t, typed, "--home", home, "apply", plan)
		if !strings.Contains(screen, "this will replace 2 partitions of retail.daily_orders") || !strings.Contains(screen, `"0123456789ab" is not the id of`) {
			t.Errorf("apply at a terminal did not show the plan, or not say the wrong id:\n%s", screen)
		}
		main := mainOf(t, home)
		if i == 0 && (code != exitRefused || main != before || !strings.Contains(screen, "no id was typed: apply stopped")) {
			t.Errorf("a wrong id typed in, then Enter: exit %d, main moved %v:\n%s", code, main != before, screen)
		}
		if i == 1 && (code != 0 || main == before) {
			t.Errorf("a wrong id, then the right one: exit %d, main moved %v:\n%s", code, main != before, screen)
		}
	}
}

// mainOf is the snapshot main of the home's retail.daily_orders is at.
func mainOf(t *testing.T, home string) int64 {
	t.Helper()
	cat := openHome(t, home)
	defer cat.Close()
	tbl, err := cat.LoadTable(context.Background(), []string{"retail", "daily_orders"})
	if err != nil {
		t.Fatal(err)
	}
	if tbl.CurrentSnapshot() == nil {
		return 0
	}
	return tbl.CurrentSnapshot().SnapshotID
}

// typeAt runs the binary on a pseudo-terminal and types a line each time
// it asks;
// it returns the exit code and what the terminal showed.
func typeAt(t *testing.T, lines []string, args ...string) (int, string) {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	cmd := exec.Command(lakeswapBinary(t), args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	// A prompt that never comes must fail the test, not hang it.
	stop := time.AfterFunc(2*time.Minute, func() { _ = cmd.Process.Kill() })
	defer stop.Stop()
	shown := make(chan string)
	go func() {
		var seen bytes.Buffer
		buf := make([]byte, 4096)
		typed := 0
		for {
			n, err := ptmx.Read(buf)
			seen.Write(buf[:n])
			if typed < len(lines) && strings.Count(seen.String(), "press Enter to stop: ") > typed {
				_, _ = ptmx.Write([]byte(lines[typed] + "\n"))
				typed++
			}
			if err != nil { // EIO once the process is gone
				shown <- seen.String()
				return
			}
		}
	}()
	_ = cmd.Wait()
	return cmd.ProcessState.ExitCode(), <-shown
}
