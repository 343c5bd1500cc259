package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lakeswap/lakeswap/swap"
	"github.com/minio/minio-go/v7"
)

// TestGC, on every site: gc removes the files a killed attempt staged and
// the incomplete uploads at its keys, once past the grace period; it keeps
// every file a snapshot references, every file of a plan waiting for
// approval (which then applies), and everything outside lakeswap's staging
// layout; the dry run and a run within the grace period remove nothing.
func TestGC(t *testing.T) {
	forEachSite(t, func(t *testing.T, s *site) {
		s.createDaily()
		data := dataLocation(t, s)

		// A publish killed once it has staged, before it commits.
		barrier := t.TempDir()
		// An orchestrator's run id, escaped in the names of its files.
		const abandonedRun = "scheduled__2026-01-01T00:00:00+00:00"
		cmd := s.command("publish", "--run-id", abandonedRun, "--table", "retail.daily_orders", "--partitions", twoDays, batch2Input(t))
		if cmd.Env == nil {
			cmd.Env = os.Environ()
		}
		cmd.Env = append(cmd.Env, testCommitBarrier+"="+barrier+":2")
		var errb bytes.Buffer
		cmd.Stderr = &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
			if entries, _ := os.ReadDir(barrier); len(entries) > 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the publish never staged: %s", errb.String())
			}
		}
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
		abandoned := s.runFiles(abandonedRun)
		if len(abandoned) == 0 {
			t.Fatal("the killed publish left no staged file: the test kills nothing")
		}
		// and its hold, which it no longer refreshes
		for _, f := range s.files() {
			if strings.Contains(f, "/lakeswap/holds/"+swap.RunSegment(abandonedRun)+"-") {
				abandoned = append(abandoned, f)
			}
		}
		if len(abandoned) != 3 {
			t.Fatalf("the killed publish left %v, want its two files and its hold", abandoned)
		}

		// What is not lakeswap's: a file beside the partitions, and (on
		// S3) an upload outside the staging layout.
		foreign := data + "/order_date=2026-01-01/engine-x-00001.parquet"
		s.write(foreign, []byte("another engine's file"))
		var strayUpload, foreignUpload string
		if s.srv != nil {
			core := minio.Core{Client: s.srv.Client}
			strayUpload = s.key(data + "/order_date=2026-01-01/run-abandoned-0badc0de/part-00009.parquet")
			foreignUpload = s.key(data + "/order_date=2026-01-01/engine-x-00002.parquet")
			for _, key := range []string{strayUpload, foreignUpload} {
				if _, err := core.NewMultipartUpload(context.Background(), s.bkt, key, minio.PutObjectOptions{}); err != nil {
					t.Fatal(err)
				}
			}
		}

		// A plan waiting for approval.
		planFile := filepath.Join(t.TempDir(), "plan.json")
		var planned struct {
			PlanID string `json:"plan_id"`
		}
		if err := json.Unmarshal([]byte(s.must("plan", "-o", "json", "--run-id", "waiting", "--out", planFile, "--table", "retail.daily_orders", "--partitions", twoDays, batch2Input(t))), &planned); err != nil {
			t.Fatal(err)
		}
		waiting := s.runFiles("waiting")

		files, uploads := s.files(), s.uploads()
		gc := func(clock string, args ...string) string {
			t.Helper()
			cmd := s.command(append([]string{"gc", "--table", "retail.daily_orders"}, args...)...)
			if cmd.Env == nil {
				cmd.Env = os.Environ()
			}
			cmd.Env = append(cmd.Env, "LAKESWAP_TEST_CLOCK="+clock)
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("gc %v: %v: %s", args, err, out)
			}
			return string(out)
		}
		// Within the grace period: the killed publish's hold goes at once,
		// since its process has ended; its files stay until they are
		// older than the grace period.
		hold := abandoned[len(abandoned)-1]
		kept := slices.DeleteFunc(slices.Clone(files), func(f string) bool { return f == hold })
		if out := gc("0s", "--yes"); !strings.Contains(out, "removed 1 item") || !strings.Contains(out, "has ended") || !slices.Equal(s.files(), kept) {
			t.Fatalf("gc within the grace period: want only the killed publish's hold removed, saying its process has ended:\n%s", out)
		}
		files, abandoned = kept, abandoned[:len(abandoned)-1]
		out := gc("48h")
		if !strings.Contains(out, "dry run: nothing was removed") || !slices.Equal(s.files(), files) || !slices.Equal(s.uploads(), uploads) {
			t.Fatalf("the dry run removed something, or says nothing:\n%s", out)
		}
		for _, f := range abandoned {
			if !strings.Contains(out, f) {
				t.Errorf("the dry run does not list %s:\n%s", f, out)
			}
		}

		out = gc("48h", "--yes")
		left := s.files()
		for _, f := range files {
			gone := !slices.Contains(left, f)
			if want := slices.Contains(abandoned, f); gone != want {
				t.Errorf("%s: removed %v, want %v\n%s", f, gone, want, out)
			}
		}
		if !strings.Contains(out, "file") || !strings.Contains(out, "removed ") {
			t.Errorf("gc does not say what it removed:\n%s", out)
		}
		if s.srv != nil {
			if got := s.uploads(); !slices.Equal(got, []string{foreignUpload}) {
				t.Errorf("uploads after gc: %v, want only the foreign one %s (the stray %s aborted)", got, foreignUpload, strayUpload)
			}
		}
		if len(waiting) == 0 || !isSubset(waiting, left) {
			t.Errorf("gc removed files of the waiting plan: %v", waiting)
		}
		// The waiting plan's files are whole: it applies.
		s.must("apply", planFile, "--approve", planned.PlanID)
		for _, f := range s.files() {
			if strings.Contains(f, "/lakeswap/holds/") {
				t.Errorf("the applied plan is still held: %s", f)
			}
		}
	})
}

func isSubset(small, big []string) bool {
	for _, s := range small {
		if !slices.Contains(big, s) {
			return false
		}
	}
	return true
}

// dataLocation is where the site keeps retail.daily_orders' data files.
func dataLocation(t *testing.T, s *site) string {
	t.Helper()
	meta := s.metadata("daily_orders")
	return meta[:strings.LastIndex(meta, "/metadata/")] + "/data"
}
