package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/lakeswap/lakeswap/internal/retail"
)

// TestCSVAsItComes: CSV files as other tools write them publish with the
// options that say their form, and a header that does not match says
// what it may mean; a refused file changes nothing.
func TestCSVAsItComes(t *testing.T) {
	home := newHome(t)
	dir := t.TempDir()
	publish := func(in string, flags ...string) (int, string) {
		t.Helper()
		code, _, errs := cli(t, home, append(append([]string{"publish", "--table", "retail.daily_orders", "--partitions", "order_date=2026-01-01"}, flags...), in)...)
		return code, errs
	}
	refused := func(in, want string, flags ...string) {
		t.Helper()
		before := metadataLocation(t, home)
		code, errs := publish(in, flags...)
		if code == 0 || !strings.Contains(errs, want) {
			t.Errorf("%s %v: exit %d, want a refusal saying %q:\n%s", in, flags, code, want, errs)
		}
		if metadataLocation(t, home) != before {
			t.Errorf("a refused file changed the table")
		}
	}
	holds := func(channel string, cents int64) {
		t.Helper()
		if !slices.ContainsFunc(homeDaily(t, home), func(r retail.DailyOrder) bool {
			return r.OrderDate == "2026-01-01" && r.Channel == channel && r.AmountCents == cents
		}) {
			t.Errorf("the table does not hold %s %d: %+v", channel, cents, homeDaily(t, home))
		}
	}

	semi := write(t, dir, "semi.csv", "order_date;channel;order_count;amount_cents\n2026-01-01;web;1;501\n")
	refused(semi, "pass --delimiter ';'")
	if code, errs := publish(semi, "--delimiter", ";"); code != 0 {
		t.Fatalf("--delimiter ';': exit %d: %s", code, errs)
	}
	holds("web", 501)

	bare := write(t, dir, "bare.csv", "2026-01-01,web,2,502\n")
	refused(bare, "--no-header")
	if code, errs := publish(bare, "--no-header", "--columns", "order_date,channel,order_count,amount_cents"); code != 0 {
		t.Fatalf("--no-header --columns: exit %d: %s", code, errs)
	}
	holds("web", 502)
	// Every row has the fields --columns names: more or fewer is refused
	// naming the line, never read short (nulls) or past its end.
	cols := "order_date,channel,order_count,amount_cents"
	refused(write(t, dir, "long.csv", "2026-01-01,web,2,502,extra\n"), "long.csv:1", "--no-header", "--columns", cols)
	refused(write(t, dir, "short.csv", "2026-01-01,web,2\n"), "row has 3 fields; --columns names 4", "--no-header", "--columns", cols)
	refused(write(t, dir, "shortfirst.csv", "2026-01-01,web,2\n2026-01-01,app,2,5\n"), "shortfirst.csv:1", "--no-header", "--columns", cols)

	loud := write(t, dir, "loud.csv", "ORDER_DATE,Channel,order_count,AMOUNT_CENTS\n2026-01-01,app,3,503\n")
	if code, errs := publish(loud); code != 0 {
		t.Fatalf("a header in another case: exit %d: %s", code, errs)
	}
	holds("app", 503)

	refused(write(t, dir, "typo.csv", "ordr_date,channel,order_count,amount_cents\n2026-01-01,web,1,5\n"), "did you mean order_date?")
	// NULL marks null: in a required column it is refused as a missing
	// value, not as text that is no number.
	refused(write(t, dir, "nulls.csv", "order_date,channel,order_count,amount_cents\n2026-01-01,web,1,NULL\n"), "value is missing, and the column is required", "--null", "NULL")
	if code, errs := publish(semi, "--no-header"); code != exitUsage {
		t.Errorf("--no-header without --columns: exit %d, want %d: %s", code, exitUsage, errs)
	}
	if code, errs := publish(semi, "--delimiter", ";;"); code != exitUsage {
		t.Errorf("a delimiter of two characters: exit %d, want %d: %s", code, exitUsage, errs)
	}

	// Quoted by ': the quote doubled inside a value, a " kept as text.
	single := write(t, dir, "single.csv", "order_date|channel|order_count|amount_cents\n2026-01-01|'we|b ''x'''|4|504\n2026-01-01|say \"hi\"|5|505\n")
	if code, errs := publish(single, "--delimiter", "|", "--quote", "'"); code != 0 {
		t.Fatalf("--quote \"'\": exit %d: %s", code, errs)
	}
	holds(`we|b 'x'`, 504)
	holds(`say "hi"`, 505)
	// A stray quote is named as the file writes it.
	refused(write(t, dir, "stray.csv", "order_date|channel|order_count|amount_cents\n2026-01-01|a'b|1|5\n"), "bare ' in non-quoted-field", "--delimiter", "|", "--quote", "'")
	if code, errs := publish(single, "--quote", ","); code != exitUsage {
		t.Errorf("a quote that is the delimiter: exit %d, want %d: %s", code, exitUsage, errs)
	}

	// Names of another system's, mapped to the table's columns.
	theirs := write(t, dir, "theirs.csv", "day,chan,n,cents\n2026-01-01,partner,6,506\n")
	refused(theirs, "column is not in the table schema")
	if code, errs := publish(theirs, "--column-map", write(t, dir, "map.yaml", "day: order_date\nchan: channel\nn: order_count\ncents: amount_cents\n")); code != 0 {
		t.Fatalf("--column-map: exit %d: %s", code, errs)
	}
	holds("partner", 506)
	refused(theirs, "the file has no column dy", "--column-map", write(t, dir, "typo.yaml", "dy: order_date\nchan: channel\nn: order_count\ncents: amount_cents\n"))
	refused(write(t, dir, "clash.csv", "day,channel,chan,order_count,amount_cents\n2026-01-01,x,y,1,5\n"), "the file has a column channel too", "--column-map", write(t, dir, "clash.yaml", "chan: channel\nday: order_date\n"))
	if code, errs := publish(theirs, "--column-map", write(t, dir, "twice.yaml", "day: order_date\nchan: order_date\n")); code != exitUsage || !strings.Contains(errs, "both chan and day to order_date") {
		t.Errorf("a map taking two names to one column: exit %d, want %d: %s", code, exitUsage, errs)
	}
}

// TestBandSumsAtScale: the plausible band's refusal writes a decimal
// column's sums at its scale, as every other figure is written.
func TestBandSumsAtScale(t *testing.T) {
	home := t.TempDir()
	if code, _, errs := cli(t, home, "table", "create", "--schema", write(t, home, "money.yaml", moneyYAML)); code != 0 {
		t.Fatalf("table create: exit %d: %s", code, errs)
	}
	lines := func(cents string) string {
		var b strings.Builder
		b.WriteString("day,id,amount\n")
		for i := range 200 {
			fmt.Fprintf(&b, "2026-01-01,%d,%s\n", i, cents)
		}
		return b.String()
	}
	if code, _, errs := cli(t, home, "publish", "--table", "shop.payments", "--partitions", "day=2026-01-01", write(t, home, "a.csv", lines("1.25"))); code != 0 {
		t.Fatalf("publish: exit %d: %s", code, errs)
	}
	code, _, errs := cli(t, home, "publish", "--table", "shop.payments", "--partitions", "day=2026-01-01", write(t, home, "b.csv", lines("0.05")))
	if code != exitRefused || !strings.Contains(errs, "sum of amount 250.00 -> 10.00 (0.04x)") {
		t.Errorf("a sum far below the band: exit %d, want %d with the sums at scale 2:\n%s", code, exitRefused, errs)
	}
}

// TestOffsetTimeOutsideSaysUTC: a time with an offset that falls in the
// next UTC day is refused as outside the declared day, and the refusal
// says the day is taken in UTC.
func TestOffsetTimeOutsideSaysUTC(t *testing.T) {
	home := t.TempDir()
	schema := write(t, home, "events.yaml", `table: web.events
columns:
  - {name: event_ts, type: timestamptz, required: true}
  - {name: id, type: long, required: true}
partition: [{column: event_ts, transform: day}]
`)
	if code, _, errs := cli(t, home, "table", "create", "--schema", schema); code != 0 {
		t.Fatalf("table create: exit %d: %s", code, errs)
	}
	in := write(t, home, "e.ndjson", `{"event_ts":"2026-03-04T23:30:00-05:00","id":1}`+"\n")
	code, _, errs := cli(t, home, "publish", "--table", "web.events", "--partitions", "event_ts=2026-03-04", in)
	if code != exitRefused || !strings.Contains(errs, "partition event_ts=2026-03-05") || !strings.Contains(errs, "day(event_ts) is taken in UTC") {
		t.Errorf("a time of the next UTC day: exit %d, want %d saying the day is UTC:\n%s", code, exitRefused, errs)
	}
}
