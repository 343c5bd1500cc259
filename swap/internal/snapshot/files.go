package snapshot

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/contract"
	"github.com/lakeswap/lakeswap/internal/manifest"
	"github.com/lakeswap/lakeswap/parquetio"
	"github.com/lakeswap/lakeswap/verify"
)

// Files lists the live files of a snapshot by partition value, delete
// files included: a partition's rows are its data files' with those
// applied (WithDeletes), and they go out with its data files.
func Files(ctx context.Context, fsys icebergio.IO, snap *table.Snapshot, c *contract.Contract) (map[string][]iceberg.DataFile, error) {
	out := map[string][]iceberg.DataFile{}
	// A file of an earlier partition spec has no value in the current
	// one: Earlier lists those, and a run that declares a partition they
	// hold rows of is refused or rewrites them.
	for m, err := range manifest.Walk(ctx, fsys, snap, true, currentSpec(c)) {
		if err != nil {
			return nil, err
		}
		for _, e := range m.Entries {
			df := e.DataFile()
			v := c.PartitionOf(df)
			out[v] = append(out[v], df)
		}
	}
	for _, files := range out {
		slices.SortFunc(files, func(a, b iceberg.DataFile) int { return strings.Compare(a.FilePath(), b.FilePath()) })
	}
	return out, nil
}

// currentSpec keeps the manifests of the contract's partition spec.
func currentSpec(c *contract.Contract) func(iceberg.ManifestFile) bool {
	return func(m iceberg.ManifestFile) bool { return int(m.PartitionSpecID()) == c.SpecID }
}

// Earlier lists the live files of a snapshot written under an earlier
// partition spec than the contract's (a table partitioned by month, then
// by day), delete files included.
func Earlier(ctx context.Context, fsys icebergio.IO, snap *table.Snapshot, c *contract.Contract) ([]iceberg.DataFile, error) {
	var out []iceberg.DataFile
	current := currentSpec(c)
	earlier := func(m iceberg.ManifestFile) bool { return !current(m) }
	for m, err := range manifest.Walk(ctx, fsys, snap, true, earlier) {
		if err != nil {
			return nil, err
		}
		for _, e := range m.Entries {
			out = append(out, e.DataFile())
		}
	}
	slices.SortFunc(out, func(a, b iceberg.DataFile) int { return strings.Compare(a.FilePath(), b.FilePath()) })
	return out, nil
}

// DataPaths are the paths of the data files among files: what is read
// for their rows, through an IO that applies the rest (WithDeletes).
func DataPaths(files []iceberg.DataFile) []string {
	var out []string
	for _, f := range files {
		if f.ContentType() == iceberg.EntryContentData {
			out = append(out, f.FilePath())
		}
	}
	return out
}

func Paths(files []iceberg.DataFile) []string {
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = f.FilePath()
	}
	return out
}

// Fingerprint reads a partition's files and fingerprints their rows
// together, with the partition's rows among shares (files of an earlier
// spec, EachShare); the order of files does not matter.
func Fingerprint(ctx context.Context, fsys icebergio.IO, c *contract.Contract, value string, files []string, shares ...string) (verify.Fingerprint, error) {
	acc := verify.NewFingerprinter(c, value)
	for _, path := range files {
		if err := AddFile(ctx, fsys, acc, path); err != nil {
			return verify.Fingerprint{}, err
		}
	}
	if err := EachShare(ctx, fsys, c, value, shares, acc.Add); err != nil {
		return verify.Fingerprint{}, err
	}
	return acc.Result(), nil
}

func AddFile(ctx context.Context, fsys icebergio.IO, acc *verify.Accumulator, path string) error {
	rr, err := Open(ctx, fsys, path)
	if err != nil {
		return err
	}
	return addRows(acc, path, rr)
}

// AddHashed adds a data file's rows as AddFile does and returns the size
// and hex SHA-256 of its bytes, read once for both where the file is small
// (parquetio.OpenHashed). Its deletes, if any, apply to the rows only.
func AddHashed(ctx context.Context, fsys icebergio.IO, acc *verify.Accumulator, path string) (int64, string, error) {
	if d, ok := fsys.(*DeletesIO); ok {
		if _, ok := d.tasks[path]; ok {
			f, err := d.IO.Open(path)
			if err != nil {
				return 0, "", fmt.Errorf("open %s: %w", path, err)
			}
			n, sum, err := parquetio.Checksum(ctx, f)
			_ = f.Close()
			if err != nil {
				return 0, "", fmt.Errorf("read %s: %w", path, err)
			}
			return n, sum, AddFile(ctx, fsys, acc, path)
		}
		fsys = d.IO
	}
	rr, n, sum, err := parquetio.OpenHashed(ctx, fsys, path)
	if err != nil {
		return n, sum, err // the hash, if taken, says whether the bytes changed
	}
	return n, sum, addRows(acc, path, rr)
}

// addRows adds every row rr reads of path to acc, and releases rr.
func addRows(acc *verify.Accumulator, path string, rr array.RecordReader) error {
	defer rr.Release()
	for rr.Next() {
		rec, err := acc.Project(rr.RecordBatch())
		if err != nil {
			return fmt.Errorf("%s does not read as the table's schema: %w", path, err)
		}
		err = acc.Add(rec)
		rec.Release()
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	return rr.Err()
}

// At is a snapshot's live data files by partition value, with
// what is needed to read them.
type At struct {
	Meta     table.Metadata
	Contract *contract.Contract
	FS       icebergio.IO
	Live     map[string][]iceberg.DataFile
	// Earlier are the live files written under an earlier partition
	// spec, which have no value in the current one.
	Earlier []iceberg.DataFile
}

// Fingerprint fingerprints partition value's rows at the snapshot: its
// data files', and its rows among the earlier spec's files.
func (at *At) Fingerprint(ctx context.Context, value string) (verify.Fingerprint, error) {
	return Fingerprint(ctx, at.FS, at.Contract, value, DataPaths(at.Live[value]), MayHoldAny(at.Contract, at.Earlier, value)...)
}

// Validate reads partition value's rows at the snapshot and judges them
// as a run's staged rows are judged: the grain, required columns and the
// contract's column checks. It returns the findings, and those of the
// checks written warn:.
func (at *At) Validate(ctx context.Context, value string) (verify.Findings, verify.Findings, error) {
	acc := verify.NewAccumulator(at.Contract, value, nil)
	for _, path := range DataPaths(at.Live[value]) {
		if err := AddFile(ctx, at.FS, acc, path); err != nil {
			return verify.Findings{}, verify.Findings{}, err
		}
	}
	if err := EachShare(ctx, at.FS, at.Contract, value, MayHoldAny(at.Contract, at.Earlier, value), acc.Add); err != nil {
		return verify.Findings{}, verify.Findings{}, err
	}
	return acc.Findings(true), acc.Warnings(), nil
}

// LoadFiles reloads the table from the catalog and lists every live file
// of a snapshot, of any partition spec or none, by path, with an IO that
// reads its data files with their deletes applied: what reading a table
// needs, where no contract (an unpartitioned table has none) is at hand.
func LoadFiles(ctx context.Context, cat Loader, ident table.Identifier, snapshotID int64) (table.Metadata, icebergio.IO, []iceberg.DataFile, error) {
	tbl, err := cat.LoadTable(ctx, ident)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("reload %s: %w", strings.Join(ident, "."), err)
	}
	meta := tbl.Metadata()
	snap := meta.SnapshotByID(snapshotID)
	if snap == nil {
		return nil, nil, nil, fmt.Errorf("snapshot %d is not in the metadata of %s", snapshotID, strings.Join(ident, "."))
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	var files []iceberg.DataFile
	for m, err := range manifest.Walk(ctx, fsys, snap, true, nil) {
		if err != nil {
			return nil, nil, nil, err
		}
		for _, e := range m.Entries {
			files = append(files, e.DataFile())
		}
	}
	slices.SortFunc(files, func(a, b iceberg.DataFile) int { return strings.Compare(a.FilePath(), b.FilePath()) })
	if fsys, err = WithDeletes(ctx, tbl, fsys, snap, map[string][]iceberg.DataFile{"": files}); err != nil {
		return nil, nil, nil, err
	}
	return meta, fsys, files, nil
}

// Load reloads the table from the catalog and lists a snapshot's files.
func Load(ctx context.Context, cat Loader, ident table.Identifier, snapshotID int64) (*At, error) {
	tbl, err := cat.LoadTable(ctx, ident)
	if err != nil {
		return nil, fmt.Errorf("reload %s: %w", strings.Join(ident, "."), err)
	}
	meta := tbl.Metadata()
	snap := meta.SnapshotByID(snapshotID)
	if snap == nil {
		return nil, fmt.Errorf("snapshot %d is not in the metadata of %s", snapshotID, strings.Join(ident, "."))
	}
	contract, err := contract.AtSnapshot(meta, snap)
	if err != nil {
		return nil, err
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return nil, err
	}
	live, err := Files(ctx, fsys, snap, contract)
	if err != nil {
		return nil, err
	}
	earlier, err := Earlier(ctx, fsys, snap, contract)
	if err != nil {
		return nil, err
	}
	// The snapshot's rows are its data files' with their deletes applied.
	if fsys, err = WithDeletes(ctx, tbl, fsys, snap, live, map[string][]iceberg.DataFile{"": earlier}); err != nil {
		return nil, err
	}
	return &At{Meta: meta, Contract: contract, FS: fsys, Live: live, Earlier: earlier}, nil
}

// Referenced lists every data file any snapshot of the table names.
func Referenced(ctx context.Context, fsys icebergio.IO, meta table.Metadata) (map[string]bool, error) {
	out := map[string]bool{}
	seen := map[string]bool{}
	unseen := func(m iceberg.ManifestFile) bool {
		first := !seen[m.FilePath()]
		seen[m.FilePath()] = true
		return first
	}
	for _, s := range meta.Snapshots() {
		for m, err := range manifest.Walk(ctx, fsys, &s, false, unseen) {
			if err != nil {
				return nil, err
			}
			for _, e := range m.Entries {
				out[e.DataFile().FilePath()] = true
			}
		}
	}
	return out, nil
}

// Writable refuses a table lakeswap cannot add files to: a format-v3
// table, whose row lineage needs a first row id on every file a commit
// adds, which iceberg-go's file replace does not give.
func Writable(meta table.Metadata) error {
	if meta.Version() >= 3 {
		return fmt.Errorf("the table is Iceberg format v%d; lakeswap writes format v1 and v2 tables only (a v3 commit needs row lineage on every file it adds)", meta.Version())
	}
	return nil
}

// DataLocation is where the table keeps its data files.
func DataLocation(meta table.Metadata) string {
	base := meta.Properties()["write.data.path"]
	if base == "" {
		base = strings.TrimSuffix(meta.Location(), "/") + "/data"
	}
	return strings.TrimSuffix(base, "/")
}

// FilesAt lists a snapshot's live data files by partition value.
func FilesAt(ctx context.Context, tbl *table.Table, snap *table.Snapshot, c *contract.Contract) (map[string][]iceberg.DataFile, error) {
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return nil, err
	}
	return Files(ctx, fsys, snap, c)
}
