package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/contract"
	"github.com/lakeswap/lakeswap/parquetio"
)

// nestedRow is one row of eng.spark as NDJSON.
func nestedRow(day string, uid int, u, rest string) string {
	return `{"d":"` + day + `","uid":` + strconv.Itoa(uid) + `,"u":` + u + rest + "}\n"
}

// TestNestedColumnsAfterRenameAndDrop is issue 42's acceptance: a table
// made through iceberg-go's API with struct, list, map, uuid, fixed and
// time columns, whose grain column another engine renamed and one of whose
// columns it dropped, after data was written. table set refuses a grain
// over a duplicate key and over a null, naming them, and takes a clean
// one; a publish of nested values reads back exactly; a rerun commits
// nothing; verify checks the runs and the statistics; a rollback puts the
// day back. The reader (iceberg-go's scan) sees exactly the expected rows
// after each step.
func TestNestedColumnsAfterRenameAndDrop(t *testing.T) {
	s := newSite(t, "sqlite+local")
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "d", Type: iceberg.PrimitiveTypes.Date, Required: true},
		iceberg.NestedField{ID: 2, Name: "uid", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 3, Name: "tmp", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 4, Name: "s", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 10, Name: "a", Type: iceberg.PrimitiveTypes.Int32}, {ID: 11, Name: "b", Type: iceberg.PrimitiveTypes.String}}}},
		iceberg.NestedField{ID: 5, Name: "l", Type: &iceberg.ListType{ElementID: 12, Element: iceberg.PrimitiveTypes.Int64}},
		iceberg.NestedField{ID: 6, Name: "m", Type: &iceberg.MapType{KeyID: 13, KeyType: iceberg.PrimitiveTypes.String, ValueID: 14, ValueType: iceberg.PrimitiveTypes.Float64}},
		iceberg.NestedField{ID: 7, Name: "u", Type: iceberg.PrimitiveTypes.UUID},
		iceberg.NestedField{ID: 8, Name: "f", Type: iceberg.FixedTypeOf(4)},
		iceberg.NestedField{ID: 9, Name: "t", Type: iceberg.PrimitiveTypes.Time},
	)
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{1}, FieldID: 1000, Name: "d_day", Transform: iceberg.DayTransform{}})
	createEngineTable(t, s, "spark", sc, spec)
	const tbl = "eng.spark"
	in := func(lines string) string { return write(t, t.TempDir(), "in.ndjson", lines) }
	const u1, u2 = `"f79c3e09-677c-4bbd-a479-3f349cb785e7"`, `"0e8b1f4c-2f55-4a3b-9d2e-7b4c1a6f9e01"`

	// Day 1 as first written: uid 7 twice, no grain yet; day 3, whose
	// file stays live, under the old names too.
	s.must("publish", "--run-id", "first", "--table", tbl, "--partitions", "d=2026-01-01,2026-01-03", in(
		nestedRow("2026-01-01", 7, u1, `,"tmp":"x","s":{"a":1,"b":"x"}`)+
			nestedRow("2026-01-01", 7, "null", `,"tmp":"y"`)+
			nestedRow("2026-01-03", 20, u2, `,"tmp":"z"`)))
	evolve(t, s, "spark", func(u *table.UpdateSchema) *table.UpdateSchema {
		return u.RenameColumn([]string{"uid"}, "user_id").DeleteColumn([]string{"tmp"})
	})

	// table set over the duplicate, then over the null: refused, naming them.
	meta, files := s.metadata(tbl), s.files()
	if code, _, errs := s.cli("table", "set", "--table", tbl, "grain=user_id"); code != exitRefused || !strings.Contains(errs, "user_id=7") {
		t.Fatalf("table set grain=user_id over a duplicate key after the rename: exit %d: %s; want refused naming user_id=7", code, errs)
	}
	if code, _, errs := s.cli("table", "set", "--table", tbl, "grain=u"); code != exitRefused || !strings.Contains(errs, "null-grain") || !strings.Contains(errs, "has no u") {
		t.Fatalf("table set grain=u while a row's u is null: exit %d: %s; want refused naming the null", code, errs)
	}
	if code, _, errs := s.cli("table", "set", "--table", tbl, "grain=s"); code == 0 || !strings.Contains(errs, "primitive") {
		t.Fatalf("table set grain=s (a struct): exit %d: %s; want refused", code, errs)
	}
	if s.metadata(tbl) != meta || !slices.Equal(s.files(), files) {
		t.Fatal("a refused table set changed the table")
	}

	// Day 1 clean, under the new names; then the grain is taken.
	// Rows under the renamed column.
	renamed := func(lines string) string { return strings.ReplaceAll(lines, `"uid"`, `"user_id"`) }
	day1 := in(renamed(nestedRow("2026-01-01", 7, u1, `,"s":{"a":1,"b":"x"},"l":[1,2],"m":{"k":1.5},"f":"AAECAw==","t":"10:00:00"`) +
		nestedRow("2026-01-01", 8, u2, `,"s":null,"l":[],"m":{}`)))
	s.must("publish", "--run-id", "clean", "--table", tbl, "--partitions", "d=2026-01-01", day1)
	s.must("table", "set", "--table", tbl, "grain=user_id")

	// Day 2 with nested values in a new shape; the grain's moved-records
	// check reads day 3's file (written before the rename) by field id.
	day2 := renamed(nestedRow("2026-01-02", 9, u1, `,"s":{"a":null,"b":""},"l":[3,null,3],"m":{"z":-0.5,"a":2},"f":"/////w==","t":"23:59:59.999999"`) +
		nestedRow("2026-01-02", 10, "null", `,"l":null`))
	s.must("publish", "--run-id", "day2", "--table", tbl, "--partitions", "d=2026-01-02", in(day2))
	wantBoth := []string{
		`user_id=10 s=(null) l=(null) m=(null) u=(null) f=(null) t=(null)`,
		`user_id=20 s=(null) l=(null) m=(null) u=0e8b1f4c-2f55-4a3b-9d2e-7b4c1a6f9e01 f=(null) t=(null)`,
		`user_id=7 s={"a":1,"b":"x"} l=[1,2] m=[{"key":"k","value":1.5}] u=f79c3e09-677c-4bbd-a479-3f349cb785e7 f=AAECAw== t=10:00:00.000000`,
		`user_id=8 s=(null) l=[] m=[] u=0e8b1f4c-2f55-4a3b-9d2e-7b4c1a6f9e01 f=(null) t=(null)`,
		`user_id=9 s={"a":null,"b":""} l=[3,null,3] m=[{"key":"z","value":-0.5},{"key":"a","value":2}] u=f79c3e09-677c-4bbd-a479-3f349cb785e7 f=/////w== t=23:59:59.999999`,
	}
	if got := view(t, s, "spark", "user_id", "s", "l", "m", "u", "f", "t"); !slices.Equal(got, wantBoth) {
		t.Fatalf("the reader sees\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(wantBoth, "\n"))
	}

	// The same rows again, the map's entries in another order: nothing.
	meta = s.metadata(tbl)
	reordered := strings.Replace(day2, `{"z":-0.5,"a":2}`, `{"a":2,"z":-0.5}`, 1)
	if out := s.must("publish", "--table", tbl, "--partitions", "d=2026-01-02", in(reordered)); !strings.Contains(out, "unchanged") || s.metadata(tbl) != meta {
		t.Errorf("the same rows with a map's entries reordered: %s; want unchanged, nothing committed", out)
	}
	// A duplicate key now that the grain is set: refused.
	if code, _, errs := s.cli("publish", "--table", tbl, "--partitions", "d=2026-01-02", in(strings.ReplaceAll(day2, `"user_id":10`, `"user_id":9`))); code != exitRefused || !strings.Contains(errs, "duplicate-grain") {
		t.Errorf("a duplicate user_id: exit %d: %s", code, errs)
	}
	for _, args := range [][]string{{"verify", "--table", tbl}, {"verify", "--table", tbl, "--run", "first"}, {"verify", "--table", tbl, "--run", "day2"}} {
		if out := s.must(args...); !strings.Contains(out, "ok") {
			t.Errorf("%v: %s", args, out)
		}
	}
	if out := s.must("show", "--table", tbl, "--run", "day2"); !strings.Contains(out, "day2") {
		t.Errorf("show day2: %s", out)
	}

	// Another engine renames a struct's field and adds one: day 2's files,
	// written before, read by field id; the same rows under the new names
	// commit nothing.
	evolve(t, s, "spark", func(u *table.UpdateSchema) *table.UpdateSchema {
		return u.RenameColumn([]string{"s", "b"}, "bee").AddColumn([]string{"s", "c"}, iceberg.PrimitiveTypes.Int32, "", false, nil)
	})
	meta = s.metadata(tbl)
	if out := s.must("publish", "--table", tbl, "--partitions", "d=2026-01-02", in(strings.ReplaceAll(day2, `"b":""`, `"bee":""`))); !strings.Contains(out, "unchanged") || s.metadata(tbl) != meta {
		t.Errorf("day 2's rows again after the struct's field was renamed: %s; want unchanged", out)
	}
	if out := s.must("verify", "--table", tbl); !strings.Contains(out, "ok") {
		t.Errorf("verify --table after the struct evolved: %s", out)
	}

	s.must("rollback", "--table", tbl, "--run", "day2")
	if got := view(t, s, "spark", "user_id", "l", "m", "u", "f", "t"); !slices.Equal(got, []string{strings.Replace(wantBoth[1], " s=(null)", "", 1), strings.Replace(wantBoth[2], ` s={"a":1,"b":"x"}`, "", 1), strings.Replace(wantBoth[3], " s=(null)", "", 1)}) {
		t.Errorf("after the rollback the reader sees\n%s", strings.Join(got, "\n"))
	}
}

// TestUUIDAndFixedPartitions: a table partitioned by identity(u), a uuid,
// and bucket[4](f), a fixed(2). Partitions are declared as history prints
// them; a publish lands each row in its own partition, whose value the
// manifests record as iceberg-go's scan reads it; a rerun commits nothing;
// a row outside is refused naming its partition; verify checks the
// partition summaries other engines prune on.
func TestUUIDAndFixedPartitions(t *testing.T) {
	s := newSite(t, "sqlite+local")
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "u", Type: iceberg.PrimitiveTypes.UUID, Required: true},
		iceberg.NestedField{ID: 2, Name: "f", Type: iceberg.FixedTypeOf(2), Required: true},
		iceberg.NestedField{ID: 3, Name: "n", Type: iceberg.PrimitiveTypes.Int64, Required: true})
	spec := iceberg.NewPartitionSpec(
		iceberg.PartitionField{SourceIDs: []int{1}, FieldID: 1000, Name: "u", Transform: iceberg.IdentityTransform{}},
		iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1001, Name: "f_bucket", Transform: iceberg.BucketTransform{NumBuckets: 4}})
	createEngineTable(t, s, "ids", sc, spec)
	const tbl = "eng.ids"
	const u1, u2 = "f79c3e09-677c-4bbd-a479-3f349cb785e7", "0e8b1f4c-2f55-4a3b-9d2e-7b4c1a6f9e01"
	rows := `{"u":"` + u1 + `","f":"AAE=","n":1}` + "\n" + `{"u":"` + u2 + `","f":"AAI=","n":2}` + "\n"
	in := write(t, t.TempDir(), "in.ndjson", rows)
	s.must("publish", "--run-id", "ids", "--table", tbl, "--partitions", "u="+u1+","+u2, "--partitions", "f=bucket:0..3", in)
	if got, want := view(t, s, "ids", "u", "f", "n"), []string{"u=" + u2 + " f=AAI= n=2", "u=" + u1 + " f=AAE= n=1"}; !slices.Equal(got, want) {
		t.Fatalf("the reader sees %v, want %v", got, want)
	}
	_, et, done := engineTable(t, s, "ids")
	tasks, err := et.Scan().PlanFiles(t.Context())
	done()
	if err != nil {
		t.Fatal(err)
	}
	var parts []string
	for _, task := range tasks {
		p := task.File.Partition()
		parts = append(parts, fmt.Sprint(p[1000], "/", p[1001]))
	}
	slices.Sort(parts)
	// bucket[4] of the bytes 0001 and 0002, by Iceberg's murmur3.
	b1, b2 := iceberg.BucketTransform{NumBuckets: 4}.Transformer(iceberg.FixedTypeOf(2))([]byte{0, 1}), iceberg.BucketTransform{NumBuckets: 4}.Transformer(iceberg.FixedTypeOf(2))([]byte{0, 2})
	want := []string{fmt.Sprint(u2, "/", b2.Val), fmt.Sprint(u1, "/", b1.Val)}
	slices.Sort(want)
	if !slices.Equal(parts, want) {
		t.Errorf("the files record partitions %v, want %v", parts, want)
	}
	meta := s.metadata(tbl)
	if out := s.must("publish", "--table", tbl, "--partitions", "u="+u1+","+u2, "--partitions", "f=bucket:0..3", in); !strings.Contains(out, "unchanged") || s.metadata(tbl) != meta {
		t.Errorf("the same rows again: %s", out)
	}
	if code, _, errs := s.cli("publish", "--table", tbl, "--partitions", "u="+u1, "--partitions", "f=bucket:0..3", in); code != exitRefused || !strings.Contains(errs, u2) {
		t.Errorf("a row of another uuid: exit %d: %s; want refused naming %s", code, errs, u2)
	}
	if out := s.must("verify", "--table", tbl); !strings.Contains(out, "ok") {
		t.Errorf("verify --table: %s", out)
	}
	if code, _, errs := s.cli("publish", "--table", tbl, "--partitions", "u=F79C3E09-677C-4BBD-A479-3F349CB785E7", "--partitions", "f=bucket:0..3", in); code == 0 || !strings.Contains(errs, "8-4-4-4-12") {
		t.Errorf("a uuid in upper case, which no row's partition is written as: exit %d: %s", code, errs)
	}
}

// TestWideDecimalSums: an additive decimal(38,18) column, whose sum of a
// few rows passes 64 bits, publishes; its sum is exact in the run record
// (history), the plan and every JSON output (a string past 2^53), and
// verify and a rollback read it back.
func TestWideDecimalSums(t *testing.T) {
	s := newSite(t, "sqlite+local")
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "d", Type: iceberg.PrimitiveTypes.Date, Required: true},
		iceberg.NestedField{ID: 2, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 3, Name: "amount", Type: iceberg.DecimalTypeOf(38, 18)})
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{1}, FieldID: 1000, Name: "d", Transform: iceberg.IdentityTransform{}})
	createEngineTable(t, s, "wide", sc, spec)
	const tbl = "eng.wide"
	s.must("table", "set", "--table", tbl, "additive=amount", "grain=id")
	s.must("publish", "--table", tbl, "--partitions", "d=2026-01-02", write(t, t.TempDir(), "other.ndjson", `{"d":"2026-01-02","id":99,"amount":"1"}`+"\n"))
	var lines strings.Builder
	for i := range 10 {
		fmt.Fprintf(&lines, `{"d":"2026-01-01","id":%d,"amount":"99999999999999999999.999999999999999999"}`+"\n", i)
	}
	lines.WriteString(`{"d":"2026-01-01","id":10,"amount":"0.000000000000000001"}` + "\n")
	in := write(t, t.TempDir(), "in.ndjson", lines.String())
	// Ten of 10^38-1 unscaled, and one more: 10^39 - 9.
	const want = "999999999999999999999999999999999999991"
	const shown = "999,999,999,999,999,999,999.999999999999999991"
	out := s.must("publish", "--run-id", "wide", "--table", tbl, "--partitions", "d=2026-01-01", in)
	if !strings.Contains(out, "amount="+shown) {
		t.Errorf("publish shows %s; want the sum amount=%s", out, shown)
	}
	var hist struct {
		Main []struct {
			Sums map[string]any `json:"sums"`
		} `json:"main"`
	}
	if err := json.Unmarshal([]byte(s.must("-o", "json", "history", "--table", tbl)), &hist); err != nil || len(hist.Main) != 2 {
		t.Fatalf("history: %v", err)
	}
	if got := hist.Main[0].Sums["amount"]; got != want {
		t.Errorf("history -o json records the sum as %#v, want the string %q", got, want)
	}
	if out := s.must("verify", "--table", tbl, "--run", "wide"); !strings.Contains(out, "ok") || !strings.Contains(out, shown) {
		t.Errorf("verify --run: %s; want ok and amount=%s", out, shown)
	}
	planOut := s.must("plan", "--table", tbl, "--partitions", "d=2026-01-01", "-o", "json", "--out", filepath.Join(t.TempDir(), "plan.json"),
		write(t, t.TempDir(), "less.ndjson", `{"d":"2026-01-01","id":1,"amount":"1"}`+"\n"), "--allow-implausible")
	if !strings.Contains(planOut, `"`+want+`"`) {
		t.Errorf("plan -o json does not carry the base sum %s as a string: %s", want, planOut)
	}
	s.must("rollback", "--table", tbl, "--run", "wide")
	if got := view(t, s, "wide", "id"); !slices.Equal(got, []string{"id=99"}) {
		t.Errorf("after the rollback the reader sees %v", got)
	}
}

// TestNestedJob: a SQL job builds struct, list, map, uuid and fixed values
// in the engine's own shapes (a uuid as text, fixed bytes as a BLOB), which
// are taken as the table's types with every value as it is; a rerun
// commits nothing; a value the column cannot hold as it is (text that is
// no uuid, bytes of another length) is refused naming the job's row.
func TestNestedJob(t *testing.T) {
	s := newSite(t, "sqlite+local")
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "d", Type: iceberg.PrimitiveTypes.Date, Required: true},
		iceberg.NestedField{ID: 2, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 3, Name: "s", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 10, Name: "a", Type: iceberg.PrimitiveTypes.Int32}, {ID: 11, Name: "b", Type: iceberg.PrimitiveTypes.String, Required: true}}}},
		iceberg.NestedField{ID: 4, Name: "l", Type: &iceberg.ListType{ElementID: 12, Element: iceberg.PrimitiveTypes.Int64}},
		iceberg.NestedField{ID: 5, Name: "m", Type: &iceberg.MapType{KeyID: 13, KeyType: iceberg.PrimitiveTypes.String, ValueID: 14, ValueType: iceberg.PrimitiveTypes.Float64}},
		iceberg.NestedField{ID: 6, Name: "u", Type: iceberg.PrimitiveTypes.UUID},
		iceberg.NestedField{ID: 7, Name: "f", Type: iceberg.FixedTypeOf(2)},
		iceberg.NestedField{ID: 8, Name: "t", Type: iceberg.PrimitiveTypes.Time},
	)
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{1}, FieldID: 1000, Name: "d", Transform: iceberg.IdentityTransform{}})
	createEngineTable(t, s, "nj", sc, spec)
	const tbl = "eng.nj"
	dir := t.TempDir()
	write(t, dir, "raw.ndjson", `{"d":"2026-01-01","id":1,"u":"f79c3e09-677c-4bbd-a479-3f349cb785e7","f":"0001"}`+"\n"+
		`{"d":"2026-01-01","id":2,"u":null,"f":null}`+"\n")
	job := func(name, u string) string {
		sql := "SELECT CAST(d AS DATE) AS d, id, CASE WHEN id = 1 THEN {'a': id::INTEGER, 'b': 'x'} END AS s, " +
			"CASE WHEN id = 1 THEN [id, NULL, 3] ELSE [] END AS l, MAP {'k': (id * 1.5)::DOUBLE} AS m, " + u + " AS u, " +
			"from_hex(f) AS f, TIME '10:00:00' + to_seconds(id) AS t FROM raw"
		return write(t, dir, name, "table: "+tbl+"\nsources:\n  raw: {path: raw.ndjson}\nsql: |\n  "+sql+"\n")
	}
	good := job("good.yaml", "CAST(u AS UUID)")
	s.must("publish", "--run-id", "job", "--job", good, "--partitions", "d=2026-01-01")
	want := []string{
		`id=1 s={"a":1,"b":"x"} l=[1,null,3] m=[{"key":"k","value":1.5}] u=f79c3e09-677c-4bbd-a479-3f349cb785e7 f=AAE= t=10:00:01.000000`,
		`id=2 s=(null) l=[] m=[{"key":"k","value":3}] u=(null) f=(null) t=10:00:02.000000`,
	}
	if got := view(t, s, "nj", "id", "s", "l", "m", "u", "f", "t"); !slices.Equal(got, want) {
		t.Fatalf("the reader sees\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	meta := s.metadata(tbl)
	if out := s.must("publish", "--job", good, "--partitions", "d=2026-01-01"); !strings.Contains(out, "unchanged") || s.metadata(tbl) != meta {
		t.Errorf("the job again: %s; want unchanged", out)
	}
	goodText, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	short := write(t, dir, "short.yaml", strings.Replace(string(goodText), "from_hex(f)", "from_hex('01')", 1))
	for _, c := range []struct{ job, want string }{
		{job("text.yaml", "'not-a-uuid'"), `column u: value "not-a-uuid" is not a uuid`},
		{short, "column f: value holds 1 bytes, the column holds exactly 2"},
	} {
		if code, _, errs := s.cli("publish", "--job", c.job, "--partitions", "d=2026-01-01"); code != exitRefused || !strings.Contains(errs, c.want) {
			t.Errorf("%s: exit %d: %s; want refused naming %q", c.job, code, errs, c.want)
		}
	}
	if s.metadata(tbl) != meta {
		t.Error("a refused job changed the table")
	}
}

// TestWidenedGrain: a grain column another engine widened from int to long
// after files were written is read as a long by every check of the grain:
// table set refuses a key held twice (one file of each width), naming
// it; with the data clean the grain is set, a publish runs the
// moved-records check over the int files, and verify --table finds the
// grain unique.
func TestWidenedGrain(t *testing.T) {
	s := newSite(t, "sqlite+local")
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "d", Type: iceberg.PrimitiveTypes.Date, Required: true},
		iceberg.NestedField{ID: 2, Name: "id", Type: iceberg.PrimitiveTypes.Int32, Required: true})
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{1}, FieldID: 1000, Name: "d", Transform: iceberg.IdentityTransform{}})
	createEngineTable(t, s, "wid", sc, spec)
	const tbl = "eng.wid"
	row := func(day string, id int) string {
		return write(t, t.TempDir(), "in.ndjson", `{"d":"`+day+`","id":`+strconv.Itoa(id)+"}\n")
	}
	s.must("publish", "--table", tbl, "--partitions", "d=2026-01-01", row("2026-01-01", 1))
	s.must("publish", "--table", tbl, "--partitions", "d=2026-01-03", row("2026-01-03", 3))
	evolve(t, s, "wid", func(u *table.UpdateSchema) *table.UpdateSchema {
		return u.UpdateColumn([]string{"id"}, table.ColumnUpdate{FieldType: iceberg.Optional[iceberg.Type]{Valid: true, Val: iceberg.PrimitiveTypes.Int64}})
	})
	s.must("publish", "--table", tbl, "--partitions", "d=2026-01-04", row("2026-01-04", 1)) // a long, as an int file holds it
	meta := s.metadata(tbl)
	if code, _, errs := s.cli("table", "set", "--table", tbl, "grain=id"); code != exitRefused || !strings.Contains(errs, "id=1") {
		t.Fatalf("table set grain=id over 1 in an int file and a long one: exit %d: %s; want refused naming id=1", code, errs)
	}
	if s.metadata(tbl) != meta {
		t.Fatal("a refused table set changed the table")
	}
	s.must("publish", "--table", tbl, "--partitions", "d=2026-01-04", row("2026-01-04", 4))
	s.must("table", "set", "--table", tbl, "grain=id")
	if code, _, errs := s.cli("publish", "--table", tbl, "--partitions", "d=2026-01-02", row("2026-01-02", 3)); code != exitRefused || !strings.Contains(errs, "id=3") {
		t.Errorf("a key an int file holds, published in another day: exit %d: %s; want the moved-records refusal naming id=3", code, errs)
	}
	s.must("publish", "--table", tbl, "--partitions", "d=2026-01-02", row("2026-01-02", 2))
	if out := s.must("verify", "--table", tbl); !strings.Contains(out, "grain unique across the table: true") {
		t.Errorf("verify --table: %s", out)
	}
	if got, want := view(t, s, "wid", "id"), []string{"id=1", "id=2", "id=3", "id=4"}; !slices.Equal(got, want) {
		t.Errorf("the reader sees %v, want %v", got, want)
	}
}

// TestAdoptNested: a file another engine wrote with struct columns is
// adopted as it is when its fields carry the table's ids at every depth,
// and refused, naming the field, when a struct's fields carry others
// (readers find them by id, and would read nulls).
func TestAdoptNested(t *testing.T) {
	s := newSite(t, "sqlite+local")
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "d", Type: iceberg.PrimitiveTypes.Date, Required: true},
		iceberg.NestedField{ID: 2, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 3, Name: "s", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 10, Name: "a", Type: iceberg.PrimitiveTypes.Int64}, {ID: 11, Name: "b", Type: iceberg.PrimitiveTypes.Int64}}}})
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{1}, FieldID: 1000, Name: "d", Transform: iceberg.IdentityTransform{}})
	createEngineTable(t, s, "adn", sc, spec)
	const tbl = "eng.adn"
	_, et, done := engineTable(t, s, "adn")
	location := et.Location()
	c, err := contract.Of(et.Metadata())
	done()
	if err != nil {
		t.Fatal(err)
	}
	write := func(dir string, as *arrow.Schema) {
		rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, as, strings.NewReader(`[{"d": "2026-01-01", "id": 1, "s": {"a": 1, "b": 2}}]`))
		if err != nil {
			t.Fatal(err)
		}
		defer rec.Release()
		w := parquetio.NewWriter(icebergio.LocalFS{}, location+"/data/"+dir, as, parquetio.Options{})
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	// The table's own ids (the catalog numbers a new table's fields).
	st := c.Arrow.Field(2).Type.(*arrow.StructType)
	idA, idB := st.Field(0).Metadata, st.Field(1).Metadata
	swapped := arrow.NewSchema([]arrow.Field{c.Arrow.Field(0), c.Arrow.Field(1), {Name: "s", Nullable: true, Metadata: c.Arrow.Field(2).Metadata, Type: arrow.StructOf(
		arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int64, Nullable: true, Metadata: idB},
		arrow.Field{Name: "b", Type: arrow.PrimitiveTypes.Int64, Nullable: true, Metadata: idA})}}, nil)
	write("swapped", swapped)
	meta := s.metadata(tbl)
	if code, _, errs := s.cli("publish", "--adopt", "--table", tbl, "--partitions", "d=2026-01-01", strings.TrimPrefix(location, "file://")+"/data/swapped"); code != exitRefused || !strings.Contains(errs, "field s.a") {
		t.Errorf("adopting a file whose struct's fields carry each other's ids: exit %d: %s", code, errs)
	}
	unnumbered := arrow.NewSchema([]arrow.Field{c.Arrow.Field(0), c.Arrow.Field(1), {Name: "s", Nullable: true, Metadata: c.Arrow.Field(2).Metadata, Type: arrow.StructOf(
		arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		arrow.Field{Name: "b", Type: arrow.PrimitiveTypes.Int64, Nullable: true})}}, nil)
	write("unnumbered", unnumbered)
	if code, _, errs := s.cli("publish", "--adopt", "--table", tbl, "--partitions", "d=2026-01-01", strings.TrimPrefix(location, "file://")+"/data/unnumbered"); code != exitRefused || !strings.Contains(errs, "field s.a carries no field id") {
		t.Errorf("adopting a file whose struct's fields carry no ids beside numbered columns: exit %d: %s", code, errs)
	}
	if s.metadata(tbl) != meta {
		t.Error("a refused adopt changed the table")
	}
	write("right", c.Arrow)
	s.must("publish", "--adopt", "--table", tbl, "--partitions", "d=2026-01-01", strings.TrimPrefix(location, "file://")+"/data/right")
	if got, want := view(t, s, "adn", "id", "s"), []string{`id=1 s={"a":1,"b":2}`}; !slices.Equal(got, want) {
		t.Errorf("the reader sees %v, want %v", got, want)
	}
}

// TestFingerprintVersions: a table of v1's types records its runs under
// fingerprint v1; once another engine adds a struct column, runs record
// v2; verify checks each run under its own version, and verify --table
// checks them all.
func TestFingerprintVersions(t *testing.T) {
	s := newSite(t, "sqlite+local")
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "d", Type: iceberg.PrimitiveTypes.Date, Required: true},
		iceberg.NestedField{ID: 2, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true})
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{1}, FieldID: 1000, Name: "d", Transform: iceberg.IdentityTransform{}})
	createEngineTable(t, s, "ver", sc, spec)
	const tbl = "eng.ver"
	s.must("publish", "--run-id", "old", "--table", tbl, "--partitions", "d=2026-01-01", write(t, t.TempDir(), "a.ndjson", `{"d":"2026-01-01","id":1}`+"\n"))
	evolve(t, s, "ver", func(u *table.UpdateSchema) *table.UpdateSchema {
		return u.AddColumn([]string{"s"}, &iceberg.StructType{FieldList: []iceberg.NestedField{{ID: 3, Name: "a", Type: iceberg.PrimitiveTypes.Int32}}}, "", false, nil)
	})
	s.must("publish", "--run-id", "new", "--table", tbl, "--partitions", "d=2026-01-02", write(t, t.TempDir(), "b.ndjson", `{"d":"2026-01-02","id":2,"s":{"a":5}}`+"\n"))
	_, et, done := engineTable(t, s, "ver")
	versions := map[string]string{}
	for _, snap := range et.Metadata().Snapshots() {
		if snap.Summary != nil {
			versions[snap.Summary.Properties["lakeswap.run-id"]] = snap.Summary.Properties["lakeswap.fingerprint-version"]
		}
	}
	done()
	if versions["old"] != "v1" || versions["new"] != "v2" {
		t.Errorf("the runs record fingerprint versions %v, want old v1 and new v2", versions)
	}
	for _, run := range []string{"old", "new"} {
		if out := s.must("verify", "--table", tbl, "--run", run); !strings.Contains(out, "ok") {
			t.Errorf("verify --run %s: %s", run, out)
		}
	}
	if out := s.must("verify", "--table", tbl); !strings.Contains(out, "run old") || !strings.Contains(out, "run new") {
		t.Errorf("verify --table checks both runs: %s", out)
	}
}

// TestCreateNestedTable: table create takes uuid, fixed and nested types
// in a schema file, as a person writes them; the table holds them as
// Iceberg types, with a uuid grain, and takes a publish.
func TestCreateNestedTable(t *testing.T) {
	s := newSite(t, "sqlite+local")
	s.must("table", "create", "--schema", write(t, s.home, "n.yaml", `table: eng.sessions
columns:
  - {name: day, type: date, required: true}
  - {name: session, type: uuid, required: true}
  - {name: device, type: "struct<os: string, version: required int>"}
  - {name: pages, type: list<string>}
  - {name: timings, type: "map<string, double>"}
  - {name: token, type: fixed(4)}
identifier: [session]
partition: [{column: day, transform: identity}]
`))
	_, et, done := engineTable(t, s, "sessions")
	sc := et.Schema()
	done()
	for name, want := range map[string]string{"session": "uuid", "device": "struct<", "pages": "list<string>", "timings": "map<string, double>", "token": "fixed[4]"} {
		f, ok := sc.FindFieldByName(name)
		if !ok || !strings.HasPrefix(f.Type.String(), want) {
			t.Errorf("column %s: %v, want %s", name, f.Type, want)
		}
	}
	in := write(t, t.TempDir(), "in.ndjson", `{"day":"2026-01-01","session":"f79c3e09-677c-4bbd-a479-3f349cb785e7","device":{"os":"ios","version":17},"pages":["/","/cart"],"timings":{"load":0.25},"token":"AAECAw=="}`+"\n")
	s.must("publish", "--table", "eng.sessions", "--partitions", "day=2026-01-01", in)
	if got, want := view(t, s, "sessions", "device", "pages"), []string{`device={"os":"ios","version":17} pages=["/","/cart"]`}; !slices.Equal(got, want) {
		t.Errorf("the reader sees %v, want %v", got, want)
	}
	if code, _, errs := s.cli("table", "create", "--schema", write(t, s.home, "bad.yaml", "table: web.bad\ncolumns:\n  - {name: x, type: \"struct<a: geo>\"}\n")); code == 0 || !strings.Contains(errs, `"geo" is no type`) {
		t.Errorf("a struct of an unknown type: exit %d: %s", code, errs)
	}
}

// TestReaddedGrainColumn: a column another engine dropped and added again
// is a new field: files written before hold none of its values, so they
// read as nulls. table set grain= on it is refused while such rows are
// live, naming the files that lack it; once their partition is published again, the
// grain is set, and the moved-records check reads the files of the old
// field as holding no key.
func TestReaddedGrainColumn(t *testing.T) {
	s := newSite(t, "sqlite+local")
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "d", Type: iceberg.PrimitiveTypes.Date, Required: true},
		iceberg.NestedField{ID: 2, Name: "k", Type: iceberg.PrimitiveTypes.String})
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{1}, FieldID: 1000, Name: "d", Transform: iceberg.IdentityTransform{}})
	createEngineTable(t, s, "readd", sc, spec)
	const tbl = "eng.readd"
	row := func(day, k string) string {
		return write(t, t.TempDir(), "in.ndjson", `{"d":"`+day+`","k":"`+k+"\"}\n")
	}
	s.must("publish", "--table", tbl, "--partitions", "d=2026-01-01", row("2026-01-01", "a"))
	s.must("publish", "--table", tbl, "--partitions", "d=2026-01-02", row("2026-01-02", "b"))
	evolve(t, s, "readd", func(u *table.UpdateSchema) *table.UpdateSchema { return u.DeleteColumn([]string{"k"}) })
	evolve(t, s, "readd", func(u *table.UpdateSchema) *table.UpdateSchema {
		return u.AddColumn([]string{"k"}, iceberg.PrimitiveTypes.String, "", false, nil)
	})
	if got, want := view(t, s, "readd", "d", "k"), []string{"d=2026-01-01 k=(null)", "d=2026-01-02 k=(null)"}; !slices.Equal(got, want) {
		t.Fatalf("the reader sees %v, want the old values gone", got)
	}
	meta := s.metadata(tbl)
	if code, _, errs := s.cli("table", "set", "--table", tbl, "grain=k"); code != exitRefused || !strings.Contains(errs, "column k (field 3) is required and the file has no column of that field") {
		t.Errorf("table set grain=k while the old rows have none: exit %d: %s; want refused naming the files without k", code, errs)
	}
	if s.metadata(tbl) != meta {
		t.Error("a refused table set changed the table")
	}
	s.must("publish", "--table", tbl, "--partitions", "d=2026-01-01", row("2026-01-01", "a"))
	s.must("publish", "--table", tbl, "--partitions", "d=2026-01-02", "--allow-empty", write(t, t.TempDir(), "none.ndjson", ""))
	s.must("table", "set", "--table", tbl, "grain=k")
	s.must("publish", "--table", tbl, "--partitions", "d=2026-01-03", row("2026-01-03", "c"))
	if code, _, errs := s.cli("publish", "--table", tbl, "--partitions", "d=2026-01-04", row("2026-01-04", "a")); code != exitRefused || !strings.Contains(errs, `k="a"`) {
		t.Errorf("a key day 1 holds, published in day 4: exit %d: %s; want the moved-records refusal naming k=a", code, errs)
	}
	if got, want := view(t, s, "readd", "d", "k"), []string{"d=2026-01-01 k=a", "d=2026-01-03 k=c"}; !slices.Equal(got, want) {
		t.Errorf("the reader sees %v, want %v", got, want)
	}
}
