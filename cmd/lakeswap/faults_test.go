package main

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lakeswap/lakeswap/internal/retail"
	"github.com/lakeswap/lakeswap/s3store"
	"github.com/lakeswap/lakeswap/testenv"
)

// via is the site with its S3 requests through endpoint (a fault proxy),
// with short waits between the SDK's retries; the catalog is the same.
func (s *site) via(endpoint string) *site {
	v := *s
	v.props = maps.Clone(s.props)
	v.props[s3store.PropEndpoint], v.props[s3store.PropMaxBackoff] = endpoint, "200ms"
	var yaml strings.Builder
	yaml.WriteString("catalog:\n  site:\n")
	for k, val := range v.props {
		fmt.Fprintf(&yaml, "    %s: %q\n", k, val)
	}
	v.args = []string{"--config", write(s.t, s.t.TempDir(), "faulty.yaml", yaml.String()), "--catalog", "site"}
	return &v
}

// TestPublishThroughFaults: with each kind of fault at 5% of S3 requests
// (resets, SlowDowns, bodies cut off, answers lost after the store applied
// the request), at least 9 of 10 publishes land; read straight from the
// catalog and MinIO, every exit code matches what the table holds, and a
// publish that did not land leaves no object behind.
func TestPublishThroughFaults(t *testing.T) {
	t.Parallel() // waits out S3 retry backoffs: runs beside other tests
	kinds := []testenv.Rule{
		{Probability: 0.05, Fault: testenv.Reset},
		{Probability: 0.05, Fault: testenv.Unavailable},
		{Op: testenv.OpGet, Probability: 0.05, Fault: testenv.Truncate},
		{Probability: 0.05, Fault: testenv.DropResponse},
	}
	for i, rule := range kinds {
		t.Run(rule.Fault.String(), func(t *testing.T) {
			s := newSite(t, "postgres+minio")
			s.createDaily()
			proxy := testenv.NewFaultProxy(t, s.srv.Endpoint, uint64(100+i), rule)
			faulty := s.via(proxy.Endpoint)
			landed := 0
			for round := range 10 {
				rows := []retail.DailyOrder{
					{OrderDate: "2026-01-01", Channel: "web", OrderCount: 1, AmountCents: int64(1000 + round)},
					{OrderDate: "2026-01-02", Channel: "web", OrderCount: 1, AmountCents: int64(2000 + round)},
				}
				in := filepath.Join(t.TempDir(), "in.ndjson")
				if err := retail.WriteNDJSON(in, rows); err != nil {
					t.Fatal(err)
				}
				meta, files, old := s.metadata("daily_orders"), s.files(), drillRows(t, s)
				code, out, errs := faulty.cli("publish", "--table", "retail.daily_orders", "--partitions", twoDays, in)
				moved := s.metadata("daily_orders") != meta
				if left := s.uploads(); len(left) > 0 {
					t.Errorf("round %d: exit %d left incomplete uploads: %v", round, code, left)
				}
				switch code {
				case exitOK, exitLandedUnverified:
					if !moved {
						t.Errorf("round %d: exit %d but the table did not change: %s%s", round, code, out, errs)
					}
					if code == exitOK {
						landed++
					}
				case exitUnknown:
					// Either way, as the code says; history settles it.
				case exitVerifyFailed: // rolled back: main moved back to the old rows
					if got := drillRows(t, s); !slices.Equal(got, old) {
						t.Errorf("round %d: exit 6 but the table holds %v", round, got)
					}
				default:
					if moved {
						t.Errorf("round %d: exit %d but the table changed: %s", round, code, errs)
					}
					if left := s.files(); !slices.Equal(left, files) {
						t.Errorf("round %d: exit %d left objects behind: %v", round, code, added(files, left))
					}
				}
			}
			t.Logf("%s: %d of 10 landed; injected %d faults", rule.Fault, landed, len(proxy.Injected()))
			if landed < 9 {
				t.Errorf("%d of 10 publishes landed through %s at 5%%, want at least 9", landed, rule.Fault)
			}
			if len(proxy.Injected()) == 0 {
				t.Error("no fault was injected")
			}
		})
	}
}

// added lists what after holds that before does not.
func added(before, after []string) []string {
	var out []string
	for _, f := range after {
		if !slices.Contains(before, f) {
			out = append(out, f)
		}
	}
	return out
}
