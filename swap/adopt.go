package swap

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/lakeswap/lakeswap/swap/internal/snapshot"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"golang.org/x/sync/errgroup"
	"golang.org/x/sync/semaphore"

	"github.com/lakeswap/lakeswap/contract"
	"github.com/lakeswap/lakeswap/parquetio"
	"github.com/lakeswap/lakeswap/stats"
	"github.com/lakeswap/lakeswap/swap/internal/layout"
	"github.com/lakeswap/lakeswap/verify"
)

// adopted is a file another engine wrote, as the run found it.
type adopted struct {
	path      string
	partition string // the partition of its first row
	noIDs     bool   // its columns carry no Iceberg field ids
	rows      int64  // as its footer says
}

// adopt validates and fingerprints files another engine wrote, where they
// are: each must lie under the table's location outside its metadata, be
// referenced by no snapshot, have the table's columns (by field id where
// the file carries them, else by name) and hold rows of one declared
// partition. It reads them and never writes or removes them: a refused run
// leaves them for their writer.
func (p *Publisher) adopt(ctx context.Context, fsys icebergio.IO, meta table.Metadata, c *contract.Contract, plan *run, files []string, allowEmpty bool, keysMax int64) error {
	var findings []verify.Finding
	var mu sync.Mutex
	refuse := func(file, msg string) {
		mu.Lock()
		defer mu.Unlock()
		findings = append(findings, verify.Finding{Kind: verify.KindAdopt, Where: file, Message: msg})
	}
	referenced, err := snapshot.Referenced(ctx, fsys, meta)
	if err != nil {
		return err
	}
	declared := map[string]*PartitionPlan{}
	for i := range plan.Partitions {
		declared[plan.Partitions[i].Value] = &plan.Partitions[i]
	}
	// First, where each file is and which partition it holds.
	found := make([]adopted, len(files))
	seen := map[string]bool{}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(parallelism(0))
	for i, f := range files {
		f = cleanLocation(f)
		if seen[f] { // named twice (a folder and a glob, say): adopted once
			continue
		}
		seen[f] = true
		if msg := placeOf(meta, f, referenced); msg != "" {
			refuse(f, msg)
			continue
		}
		g.Go(func() error {
			a, msg, err := inspect(gctx, fsys, c, f)
			if err != nil {
				return err
			}
			if msg != "" {
				refuse(f, msg)
				return nil
			}
			if declared[a.partition] == nil {
				refuse(f, fmt.Sprintf("the file holds rows of %s, which the run does not declare", verify.DisplayKey(c.Partition.Key(a.partition))))
				return nil
			}
			// A footer whose statistics leave out rows the file holds
			// would lose them to every reader that skips row groups by
			// them; no manifest can mend it.
			if msg, err := footerWrong(gctx, fsys, c, f); err != nil || msg != "" {
				if msg != "" {
					refuse(f, msg)
				}
				return err
			}
			found[i] = a
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	byPartition := map[string][]adopted{}
	for _, a := range found {
		if a.path != "" {
			byPartition[a.partition] = append(byPartition[a.partition], a)
			plan.NameMapping = plan.NameMapping || a.noIDs
		}
	}
	// Then every row, partition by partition: the checks and fingerprint of
	// a staged partition, and each file's rows in its one partition. Each
	// holds its rows' grain keys, so those validated at once hold at most
	// keysMax rows between them (one partition, however large, at a time).
	g, gctx = errgroup.WithContext(ctx)
	g.SetLimit(parallelism(0))
	keys := semaphore.NewWeighted(max(keysMax, 1))
	budget := &keptBudget{max: keysMax}
	defer budget.settle(plan)
	for _, pp := range declared {
		var rows int64
		for _, a := range byPartition[pp.Value] {
			rows += a.rows
		}
		weight := min(max(rows, 1), max(keysMax, 1))
		if err := keys.Acquire(ctx, weight); err != nil {
			break // the group's error, or the context's, is the reason
		}
		g.Go(func() error {
			defer keys.Release(weight)
			if err := adoptPartition(gctx, fsys, c, pp, byPartition[pp.Value], allowEmpty); err != nil {
				return err
			}
			budget.take(pp)
			var bytes int64
			for _, f := range pp.NewFiles {
				bytes += f.Bytes
			}
			p.progress().Staged(pp.Key, pp.Fingerprint.Rows, bytes)
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	slices.SortFunc(findings, func(a, b verify.Finding) int { return strings.Compare(a.Where, b.Where) })
	plan.Findings = append(plan.Findings, findings...)
	return nil
}

// cleanLocation writes a file location one way: its path cleaned of "//",
// "/./" and "/../", so that one file named two ways is one file.
func cleanLocation(f string) string {
	scheme, rest, ok := strings.Cut(f, "://")
	if !ok {
		return path.Clean(f)
	}
	host, p, _ := strings.Cut(rest, "/")
	return scheme + "://" + host + path.Clean("/"+p)
}

// stagingFolder is a folder lakeswap stages into: run-<run id>-<attempt>.
var stagingFolder = regexp.MustCompile(`/run-` + layout.RunPattern + `-[0-9a-f]{8}/`)

// placeOf says why a file may not be adopted where it lies, or "".
func placeOf(meta table.Metadata, f string, referenced map[string]bool) string {
	loc := strings.TrimSuffix(meta.Location(), "/") + "/"
	switch {
	case !strings.HasPrefix(f, loc) || f != cleanLocation(f):
		return "the file is outside the table's location " + loc + ": lakeswap adopts only files written under it"
	case strings.HasPrefix(f[len(loc):], "metadata/"):
		return "the file is in the table's metadata folder"
	case referenced[f]:
		return "a snapshot of the table already references the file: adopting it again would count its rows twice"
	case stagingFolder.MatchString(f[len(loc)-1:]):
		// Another publish may be committing these, or removing them.
		return "the file is in a folder lakeswap stages a run into (run-<run id>-<attempt>): adopt only files another engine wrote"
	}
	if local, ok := strings.CutPrefix(f, "file://"); ok {
		if msg := realPlace(strings.TrimPrefix(loc, "file://"), local); msg != "" {
			return msg
		}
	}
	return ""
}

// realPlace refuses a local file reached through a symbolic link: the
// table would then hold a file that lives elsewhere, or another of its own
// files under a second name.
func realPlace(loc, file string) string {
	realLoc, err1 := filepath.EvalSymlinks(loc)
	realFile, err2 := filepath.EvalSymlinks(file)
	if err1 != nil || err2 != nil {
		return "" // a missing file is named by the read that follows
	}
	want, err1 := filepath.Rel(loc, file)
	got, err2 := filepath.Rel(realLoc, realFile)
	if err1 != nil || err2 != nil || want != got {
		return "the file is reached through a symbolic link (it is " + realFile + "): adopt the file itself, under the table's location"
	}
	return ""
}

// adoptable checks, when a plan read back is applied, that its adopted
// files still may be: a file committed since by another run, or rewritten
// to another size, is refused (bind then compares their checksums).
func adoptable(fsys icebergio.IO, meta table.Metadata, files []parquetio.File, referenced map[string]bool) error {
	for _, f := range files {
		if msg := placeOf(meta, f.Path, referenced); msg != "" {
			return fmt.Errorf("adopted file %s: %s", f.Path, msg)
		}
		size, err := fileSize(fsys, f.Path)
		if err != nil {
			return fmt.Errorf("adopted file %s: %w", f.Path, err)
		}
		if size != f.Bytes {
			return fmt.Errorf("adopted file %s is %d bytes, not the %d the plan validated: it changed since; stage the run again", f.Path, size, f.Bytes)
		}
	}
	return nil
}

func fileSize(fsys icebergio.IO, p string) (int64, error) {
	f, err := fsys.Open(p)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return info.Size(), nil
}

// inspect reads a file's schema and first row: what it needs to be placed.
// A message says why the file cannot be adopted.
func inspect(ctx context.Context, fsys icebergio.IO, c *contract.Contract, file string) (adopted, string, error) {
	a := adopted{path: file}
	_, err := fileSize(fsys, file)
	if errors.Is(err, fs.ErrNotExist) {
		return a, "the file does not exist", nil
	}
	if err != nil {
		return a, "", fmt.Errorf("read %s: %w", file, err)
	}
	if a.rows, err = parquetio.NumRows(fsys, file); err != nil {
		return a, "the file is not Parquet lakeswap can read: " + err.Error(), nil
	}
	rr, err := parquetio.Open(ctx, fsys, file)
	if err != nil {
		return a, "the file is not Parquet lakeswap can read: " + err.Error(), nil
	}
	defer rr.Release()
	if msg := fieldIDs(rr.Schema(), c, &a); msg != "" {
		return a, msg, nil
	}
	acc := verify.NewAccumulator(c, "", nil)
	if !acc.CheckSchema(rr.Schema()) {
		var why []string
		for _, f := range acc.Findings(true).List {
			why = append(why, f.Column+": "+f.Message)
		}
		return a, "the file does not have the table's columns: " + strings.Join(why, "; "), nil
	}
	for rr.Next() {
		rec := rr.RecordBatch()
		if rec.NumRows() == 0 {
			continue
		}
		cols := make([]arrow.Array, len(c.Fields))
		for _, i := range c.Partition.Columns() {
			cols[i] = rec.Column(rec.Schema().FieldIndices(c.Fields[i].Name)[0])
		}
		valueOf, err := c.Partition.ValueFunc(cols)
		if err != nil {
			return a, err.Error(), nil
		}
		v, ok := valueOf(0)
		if !ok {
			return a, "the file's first row has no " + c.Partition.Name, nil
		}
		a.partition = v
		return a, "", nil
	}
	if err := rr.Err(); err != nil {
		return a, "read the file: " + err.Error(), nil
	}
	return a, "the file holds no rows", nil
}

// footerWrong says what is wrong with a file's own Parquet statistics,
// if anything.
func footerWrong(ctx context.Context, fsys icebergio.IO, c *contract.Contract, file string) (string, error) {
	f, err := stats.Read(ctx, fsys, file, c.Schema)
	if err != nil {
		return "", err
	}
	if probs := stats.CheckFooter(f); len(probs) > 0 {
		p := probs[0]
		return fmt.Sprintf("its Parquet statistics leave out rows it holds (%s, column %s: %s); write it again with a writer that records exact statistics",
			strings.TrimPrefix(p.Where, file+" "), p.Column, p.Message), nil
	}
	return "", nil
}

// fieldIDs checks the Iceberg field ids a file's columns carry against the
// table's: a column under its table name with another id is another column.
// A file with no ids at all is read by name.
func fieldIDs(sc *arrow.Schema, c *contract.Contract, a *adopted) string {
	seen := 0
	for _, f := range sc.Fields() {
		raw, ok := f.Metadata.GetValue("PARQUET:field_id")
		if !ok || raw == "-1" { // how arrow-go reads a column without one
			continue
		}
		seen++
		id, err := strconv.Atoi(raw)
		want, found := c.Schema.FindFieldByName(f.Name)
		if err != nil || !found || want.ID != id {
			return fmt.Sprintf("column %s carries field id %s, which is not the table's column of that name", f.Name, raw)
		}
		if i := c.Arrow.FieldIndices(f.Name); len(i) == 1 {
			if msg := nestedIDs(f.Type, c.Arrow.Field(i[0]).Type, f.Name); msg != "" {
				return msg
			}
		}
	}
	if seen > 0 && seen < sc.NumFields() {
		// Readers apply a name mapping only to files with no ids at all:
		// the columns without one would read as nulls.
		return fmt.Sprintf("%d of the file's %d columns carry field ids: a file needs ids on every column or on none", seen, sc.NumFields())
	}
	a.noIDs = seen == 0
	return ""
}

// nestedIDs checks the field ids of a nested column's fields, at every
// depth, against the table's (want): readers find a struct's field, a
// list's element and a map's key and value by id in a file that carries
// ids, so a field without one, or with one the table's field there does
// not have, would read as nulls; and, as for a column, a field must carry
// its own name's id.
func nestedIDs(got, want arrow.DataType, path string) string {
	var gf, wf []arrow.Field
	switch g := got.(type) {
	case *arrow.StructType:
		w, ok := want.(*arrow.StructType)
		if !ok {
			return ""
		}
		gf, wf = g.Fields(), w.Fields()
	case *arrow.ListType:
		if w, ok := want.(*arrow.ListType); ok {
			gf, wf = []arrow.Field{g.ElemField()}, []arrow.Field{w.ElemField()}
		}
	case *arrow.MapType:
		if w, ok := want.(*arrow.MapType); ok {
			gf, wf = []arrow.Field{g.KeyField(), g.ItemField()}, []arrow.Field{w.KeyField(), w.ItemField()}
		}
	}
	for _, f := range gf {
		name := path + "." + f.Name
		raw, ok := f.Metadata.GetValue("PARQUET:field_id")
		if !ok || raw == "-1" {
			return fmt.Sprintf("field %s carries no field id, and the file's columns do: readers would find none of its values", name)
		}
		at := slices.IndexFunc(wf, func(w arrow.Field) bool { id, _ := w.Metadata.GetValue("PARQUET:field_id"); return id == raw })
		if at < 0 {
			return fmt.Sprintf("field %s carries field id %s, which no field of %s in the table has: readers would find none of its values", name, raw, path)
		}
		if _, isStruct := got.(*arrow.StructType); isStruct && wf[at].Name != f.Name { // a list's element and a map's key and value are named by the writer
			return fmt.Sprintf("field %s carries field id %s, which is the table's field %s.%s: the file and the table name them otherwise", name, raw, path, wf[at].Name)
		}
		if msg := nestedIDs(f.Type, wf[at].Type, name); msg != "" {
			return msg
		}
	}
	return ""
}

// adoptPartition validates and fingerprints a partition's adopted files as
// one input, naming each finding's file and row.
func adoptPartition(ctx context.Context, fsys icebergio.IO, c *contract.Contract, pp *PartitionPlan, files []adopted, allowEmpty bool) error {
	var ends []int64 // the last row of each file, counting through the partition
	locate := func(row int64) string {
		i, _ := slices.BinarySearch(ends, row)
		if i >= len(files) {
			return ""
		}
		start := int64(0)
		if i > 0 {
			start = ends[i-1]
		}
		return fmt.Sprintf("%s:%d", files[i].path, row-start)
	}
	acc := verify.NewAccumulator(c, pp.Value, locate)
	keepKeys(acc, c)
	pp.NewFiles = nil
	for _, a := range files {
		// The hash is taken as the rows are read (of the very bytes, for
		// a file of up to 32 MiB): a file rewritten after no longer has
		// it, and apply and the read-back after the commit refuse it.
		before := acc.Rows()
		n, sum, err := snapshot.AddHashed(ctx, fsys, acc, a.path)
		if err != nil {
			return err
		}
		ends = append(ends, acc.Rows())
		pp.NewFiles = append(pp.NewFiles, parquetio.File{Path: a.path, Rows: acc.Rows() - before, Bytes: n, SHA256: sum})
	}
	pp.findings, pp.warnings = acc.Findings(allowEmpty), acc.Warnings()
	if err := nameKeys(ctx, fsys, acc, pp.NewFiles, pp); err != nil {
		return err
	}
	pp.Fingerprint = acc.Result()
	pp.grainHashes = acc.GrainHashes()
	pp.Adopted = true
	return nil
}

// relaxed is a schema with every column optional: how an adopted file is
// described for the commit, since engines write columns as optional that
// the table requires; the file's rows were checked to hold no null there.
func relaxed(sc *iceberg.Schema) *iceberg.Schema {
	fields := sc.Fields()
	for i := range fields {
		fields[i].Required = false
	}
	return iceberg.NewSchema(sc.ID, fields...)
}
