package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/lakeswap/lakeswap/internal/retail"
	"github.com/lakeswap/lakeswap/swap"
	"github.com/lakeswap/lakeswap/testenv"
)

// The crash and fault drill. Each trial publishes new rows in a lakeswap
// process of its own, through the fault proxy, and either kills it with
// SIGKILL or turns one kind of fault on (at 30% of requests) when the
// publish reaches a step, as its -v log says. Then, read straight from the
// catalog and MinIO: the table holds exactly the old rows or exactly the
// new, the exit code says which, a publish that failed left no object (a
// killed one may: gc finds them by run id), and a rerun converges.
//
// make test runs one trial a cell on PostgreSQL and MinIO; make
// reliability runs LAKESWAP_DRILL_TRIALS (10) on SQLite and PostgreSQL.

// drillSteps are where a fault starts: the step whose -v line
// (msg=step step=NAME) begins it.
var drillSteps = []struct{ name, line string }{
	{"staging", "stage"},
	{"staged", "commit"}, // staging done, the commit not yet sent
	{"committing", "commit+"},
	{"committed", "verify"}, // landed, not yet read back
}

var drillFaults = []testenv.Fault{0, testenv.Reset, testenv.Unavailable, testenv.Truncate, testenv.DropResponse} // 0: SIGKILL

type drillCell struct {
	fault, step                                string
	trials, landed, old, torn, wrong, leftover int
}

func TestReliabilityDrill(t *testing.T) {
	t.Parallel() // waits out S3 retry backoffs: runs beside other tests
	trials, sites := 1, []string{"postgres+minio"}
	if v := os.Getenv("LAKESWAP_DRILL_TRIALS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("LAKESWAP_DRILL_TRIALS=%q: want a count", v)
		}
		trials, sites = n, []string{"sqlite+minio", "postgres+minio"}
	}
	for _, name := range sites {
		t.Run(name, func(t *testing.T) {
			s := newSite(t, name)
			s.createDaily()
			proxy := testenv.NewFaultProxy(t, s.srv.Endpoint, 42)
			faulty := s.via(proxy.Endpoint)
			var cells []*drillCell
			round := 0
			for _, fault := range drillFaults {
				for _, step := range drillSteps {
					cell := &drillCell{fault: drillFaultName(fault), step: step.name}
					cells = append(cells, cell)
					for range trials {
						round++
						drillTrial(t, s, faulty, proxy, fault, 0.3, step.line, round, cell)
					}
				}
			}
			var b strings.Builder
			tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "FAULT\tSTEP\tTRIALS\tLANDED\tOLD\tTORN\tWRONG EXIT\tLEFTOVERS")
			torn, wrong := 0, 0
			for _, c := range cells {
				fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\n", c.fault, c.step, c.trials, c.landed, c.old, c.torn, c.wrong, c.leftover)
				torn, wrong = torn+c.torn, wrong+c.wrong
			}
			_ = tw.Flush()
			t.Logf("drill on %s, %d trial(s) a cell:\n%s", name, trials, b.String())
			if torn > 0 || wrong > 0 {
				t.Errorf("%d torn tables and %d wrong exit codes", torn, wrong)
			}
		})
	}
}

func drillFaultName(f testenv.Fault) string {
	if f == 0 {
		return "sigkill"
	}
	return f.String()
}

// drillTrial runs one publish with a fault at rate from a step on, judges
// it, and returns its exit code (-1 when killed).
func drillTrial(t *testing.T, s, faulty *site, proxy *testenv.FaultProxy, fault testenv.Fault, rate float64, at string, round int, cell *drillCell) int {
	t.Helper()
	cell.trials++
	oldRows := drillRows(t, s)
	newRows := []retail.DailyOrder{
		{OrderDate: "2026-01-01", Channel: "web", OrderCount: 1, AmountCents: int64(round)},
		{OrderDate: "2026-01-02", Channel: "web", OrderCount: 1, AmountCents: int64(round)},
	}
	in := filepath.Join(t.TempDir(), "in.ndjson")
	if err := retail.WriteNDJSON(in, newRows); err != nil {
		t.Fatal(err)
	}
	files := s.files()
	runID := fmt.Sprintf("drill-%d", round)
	cmd := faulty.command("-v", "publish", "--run-id", runID, "--table", "retail.daily_orders", "--partitions", twoDays, in)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	var mu sync.Mutex
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, delayed := strings.CutSuffix(at, "+")
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stderr)
		started := false
		for sc.Scan() {
			mu.Lock()
			log.WriteString(sc.Text() + "\n")
			mu.Unlock()
			if started || !strings.HasSuffix(sc.Text(), "msg=step step="+line) {
				continue
			}
			started = true
			if delayed {
				time.Sleep(time.Duration(round%10) * 25 * time.Millisecond) // somewhere inside the commit
			}
			if fault == 0 {
				_ = cmd.Process.Kill()
				continue
			}
			proxy.SetRules(testenv.Rule{Probability: rate, Fault: fault})
		}
	}()
	<-done
	err = cmd.Wait()
	proxy.SetRules()
	code := cmd.ProcessState.ExitCode() // -1 when killed
	got := drillRows(t, s)
	isOld, isNew := slices.Equal(got, oldRows), slices.Equal(got, retail.Only(newRows, "2026-01-01", "2026-01-02"))
	switch {
	case isNew:
		cell.landed++
	case isOld:
		cell.old++
	default:
		cell.torn++
		t.Errorf("%s at %s, round %d: the table is torn: %v", drillFaultName(fault), at, round, got)
	}
	mu.Lock()
	said := log.String()
	mu.Unlock()
	wrong := func(why string) {
		cell.wrong++
		t.Errorf("%s at %s, round %d: exit %d (%v) %s:\n%s", drillFaultName(fault), at, round, code, err, why, said)
	}
	switch code {
	case -1: // killed: either outcome
	case exitOK, exitLandedUnverified:
		if !isNew {
			wrong("but the run is not on main")
		}
	case exitUnknown:
	default:
		if !isOld {
			wrong("but the run is on main")
		}
	}
	if code != -1 {
		if left := s.uploads(); len(left) > 0 {
			cell.leftover++
			t.Errorf("%s at %s, round %d: exit %d left incomplete uploads: %v", drillFaultName(fault), at, round, code, left)
		}
	}
	switch {
	case code == exitVerifyFailed && isOld:
		// Landed, read back otherwise (every read of a file cut short),
		// and undone: the undone snapshot stays in the table's history
		// with its files, which gc removes once it expires; nothing else
		// is left.
		for _, f := range added(files, s.files()) {
			if !strings.Contains(f, "/metadata/") && !strings.Contains(f, "/run-"+swap.RunSegment(runID)+"-") {
				cell.leftover++
				t.Errorf("%s at %s, round %d: exit %d left %s, which is neither the table's metadata nor the undone run's", drillFaultName(fault), at, round, code, f)
			}
		}
	case code != -1 && code != exitOK && code != exitLandedUnverified && code != exitUnknown && isOld:
		if left := s.files(); !slices.Equal(left, files) {
			cell.leftover++
			t.Errorf("%s at %s, round %d: exit %d left objects: %v", drillFaultName(fault), at, round, code, added(files, left))
		}
	}
	if code == -1 && isOld && len(s.runFiles(runID)) > 0 {
		cell.leftover++ // a killed attempt's staging, found by its run id
	}
	// A rerun, without faults, converges on the new rows.
	if code, _, errs := s.cli("publish", "--table", "retail.daily_orders", "--partitions", twoDays, in); code != exitOK {
		t.Errorf("%s at %s, round %d: the rerun exits %d: %s", drillFaultName(fault), at, round, code, errs)
	}
	if got := drillRows(t, s); !slices.Equal(got, retail.Only(newRows, "2026-01-01", "2026-01-02")) {
		t.Errorf("%s at %s, round %d: after the rerun the table holds %v", drillFaultName(fault), at, round, got)
	}
	return code
}

// TestUnreadableCommitThroughResets: every read after the commit landed
// is reset (the first fault drill's exit 6 with the commit kept). The run
// exits 8, landed, not verified, with main holding it; never 6.
func TestUnreadableCommitThroughResets(t *testing.T) {
	s := newSite(t, "postgres+minio")
	s.createDaily()
	proxy := testenv.NewFaultProxy(t, s.srv.Endpoint, 9)
	cell := &drillCell{}
	if code := drillTrial(t, s, s.via(proxy.Endpoint), proxy, testenv.Reset, 1, "verify", 1, cell); code != exitLandedUnverified || cell.landed != 1 {
		t.Errorf("exit %d with the table %s, want %d with the run on main", code, map[bool]string{true: "new", false: "old"}[cell.landed == 1], exitLandedUnverified)
	}
}

// drillRows reads retail.daily_orders on a site straight from its catalog
// and storage, as a reader would.
func drillRows(t *testing.T, s *site) []retail.DailyOrder {
	t.Helper()
	ctx, cat, _, err := openPublisher(t.Context(), siteConfig(t, s), noLog())
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	tbl, err := cat.LoadTable(ctx, []string{"retail", "daily_orders"})
	if err != nil {
		t.Fatal(err)
	}
	rows, err := retail.ReadDaily(ctx, tbl)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// runFiles lists the objects a run's attempts staged.
func (s *site) runFiles(runID string) []string {
	var out []string
	for _, f := range s.files() {
		if strings.Contains(f, "/run-"+swap.RunSegment(runID)+"-") {
			out = append(out, f)
		}
	}
	return out
}
