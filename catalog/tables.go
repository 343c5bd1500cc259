package catalog

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strconv"
	"strings"

	icebergcat "github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/rest"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/klauspost/compress/zstd"
)

// ErrNoReleases marks a catalog that commits one table at a time: a
// release of several tables needs one that commits them together.
var ErrNoReleases = errors.New("the catalog cannot commit several tables as one")

// ErrNotApplied marks a commit across tables that surely changed nothing:
// it failed before anything could be applied (a table that would not
// load, a metadata file that could not be written, a database that could
// not be reached, an endpoint the server does not serve).
var ErrNotApplied = errors.New("nothing was applied")

// notApplied marks err as ErrNotApplied, keeping its message.
type notApplied struct{ err error }

func (n notApplied) Error() string { return n.err.Error() }
func (n notApplied) Unwrap() []error {
	return []error{n.err, ErrNotApplied}
}

// CommitTables commits changes to several tables as one change: every
// table moves, or none does. Each commit's requirements are checked
// against its table as the catalog holds it, as a single commit's are; a
// requirement that fails is an ErrConflict, and any other error leaves
// the outcome to be read from the tables.
//
// A REST catalog does it in one /transactions/commit request. On a SQL
// catalog lakeswap writes each table's new metadata file, then moves every
// table's metadata location in one database transaction, each row only
// if it still holds the location the commit was made against: the SQL
// catalog's own compare-and-swap, for all of them at once.
func (c *Catalog) CommitTables(ctx context.Context, commits []table.TableCommit) error {
	if err := c.CanCommitTables(); err != nil {
		return err
	}
	c.commits.Add(1)
	if tc, ok := c.Catalog.(icebergcat.TransactionalCatalog); ok {
		err := tc.CommitTransaction(ctx, commits)
		if errors.Is(err, rest.ErrEndpointNotSupported) {
			return notApplied{fmt.Errorf("catalog %s does not serve /transactions/commit, which a release of several tables needs: %w", c.Config.Name, err)}
		}
		return classify(err)
	}
	return classify(CommitSQLTables(ctx, c.Catalog, c.Config.Name, c.Config.Props, commits))
}

// CanCommitTables says, before anything is staged, whether the catalog
// commits several tables as one: a REST or SQL catalog does.
func (c *Catalog) CanCommitTables() error {
	if _, ok := c.Catalog.(icebergcat.TransactionalCatalog); ok {
		return nil
	}
	if c.Config.Props["type"] == "sql" {
		// The statements are written for these two.
		switch d := c.Config.Props["sql.dialect"]; d {
		case "sqlite", "postgres":
			return nil
		default:
			return fmt.Errorf("%w: catalog %s is a SQL catalog on %s; a release of several tables commits on SQLite or PostgreSQL", ErrNoReleases, c.Config.Name, d)
		}
	}
	return fmt.Errorf("%w: catalog %s is a %s catalog, which commits one table at a time; a release of several tables needs a REST catalog (its /transactions/commit) or a SQL catalog", ErrNoReleases, c.Config.Name, c.Config.Props["type"])
}

// CommitSQLTables commits changes to several tables of iceberg-go's SQL
// catalog cat (named name, opened with props) as one database
// transaction. An error before the transaction's commit is ErrNotApplied
// (a requirement that fails, ErrCommitFailed too); only the commit's own
// error leaves the outcome open.
func CommitSQLTables(ctx context.Context, cat icebergcat.Catalog, name string, props map[string]string, commits []table.TableCommit) (err error) {
	open := false // the transaction's commit was sent
	defer func() {
		if err != nil && !open {
			err = notApplied{err}
		}
	}()
	type move struct {
		ident    table.Identifier
		from, to string
		fsys     icebergio.WriteFileIO
	}
	var moves []move
	defer func() {
		if err == nil {
			return
		}
		// Metadata files no catalog row names are nobody's: a later commit
		// writes its own.
		for _, m := range moves {
			if m.fsys != nil {
				_ = m.fsys.Remove(m.to)
			}
		}
	}()
	for _, tc := range commits {
		tbl, err := cat.LoadTable(ctx, tc.Identifier)
		if err != nil {
			return err
		}
		ident := strings.Join(tc.Identifier, ".")
		for _, r := range tc.Requirements {
			if err := r.Validate(tbl.Metadata()); err != nil {
				return fmt.Errorf("%w: table %s: %w", table.ErrCommitFailed, ident, err)
			}
		}
		if len(tc.Updates) == 0 {
			// Requirements alone: the table is held where it is, its row
			// conditioned on its location in the same transaction.
			moves = append(moves, move{ident: tc.Identifier, from: tbl.MetadataLocation(), to: tbl.MetadataLocation()})
			continue
		}
		to, wfs, err := writeNext(ctx, tbl, tc.Updates)
		if err != nil {
			return fmt.Errorf("table %s: %w", ident, err)
		}
		moves = append(moves, move{tc.Identifier, tbl.MetadataLocation(), to, wfs})
	}
	if !slices.ContainsFunc(moves, func(m move) bool { return m.to != m.from }) {
		return nil // nothing to move
	}
	db, owned, err := openDB(props["sql.driver"], strings.TrimPrefix(props["uri"], "sql://"))
	if err != nil {
		return err
	}
	if owned {
		defer db.Close()
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin the catalog transaction: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // a no-op once committed
	for _, m := range moves {
		q := `UPDATE iceberg_tables SET metadata_location = $1, previous_metadata_location = $2
			WHERE catalog_name = $3 AND table_name = $4 AND metadata_location = $2`
		if m.to == m.from { // held, not moved: its row is written as it is
			q = `UPDATE iceberg_tables SET metadata_location = $1 WHERE catalog_name = $3 AND table_name = $4 AND metadata_location = $2`
		}
		res, err := tx.ExecContext(ctx, q, m.to, m.from, name, m.ident[len(m.ident)-1])
		if err != nil {
			return fmt.Errorf("move table %s: %w", strings.Join(m.ident, "."), err)
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			return fmt.Errorf("%w: table %s moved since it was loaded (its metadata is no longer %s)", table.ErrCommitFailed, strings.Join(m.ident, "."), m.from)
		}
	}
	// From here an error may be the database's lost answer: the outcome
	// is the tables' to tell, and the written files stay.
	open = true
	if cerr := tx.Commit(); cerr != nil {
		moves = nil
		return fmt.Errorf("commit the catalog transaction: %w", cerr)
	}
	return nil
}

// writeNext applies updates to a table's metadata and writes it as the
// next metadata file, returning where.
func writeNext(ctx context.Context, tbl *table.Table, updates []table.Update) (string, icebergio.WriteFileIO, error) {
	updated, err := table.UpdateTableMetadata(tbl.Metadata(), updates, tbl.MetadataLocation())
	if err != nil {
		return "", nil, err
	}
	provider, err := table.LoadLocationProvider(updated.Location(), updated.Properties())
	if err != nil {
		return "", nil, err
	}
	version, err := metadataVersion(tbl.MetadataLocation())
	if err != nil {
		return "", nil, err
	}
	loc, err := provider.NewTableMetadataFileLocation(version + 1)
	if err != nil {
		return "", nil, err
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return "", nil, err
	}
	wfs, ok := fsys.(icebergio.WriteFileIO)
	if !ok {
		return "", nil, errors.New("the table's file IO cannot write")
	}
	codec := updated.Properties().Get(table.MetadataCompressionKey, table.MetadataCompressionDefault)
	if err := writeMetadata(wfs, loc, updated, codec); err != nil {
		return "", nil, fmt.Errorf("write metadata %s: %w", loc, err)
	}
	return loc, wfs, nil
}

// metadataVersion reads the version a metadata file's name starts with
// (00012-<uuid>.metadata.json, or v12.metadata.json).
func metadataVersion(loc string) (int, error) {
	base := strings.TrimPrefix(path.Base(loc), "v")
	digits, _, _ := strings.Cut(base, "-")
	digits, _, _ = strings.Cut(digits, ".")
	v, err := strconv.Atoi(digits)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("metadata location %s: its name carries no version", loc)
	}
	return v, nil
}

// writeMetadata writes metadata as JSON, compressed as the table says.
func writeMetadata(fsys icebergio.WriteFileIO, loc string, meta table.Metadata, codec string) (err error) {
	out, err := fsys.Create(loc)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := out.Close(); err == nil {
			err = cerr
		}
	}()
	var w io.Writer = out
	switch codec {
	case table.MetadataCompressionCodecNone:
	case table.MetadataCompressionCodecGzip:
		gz := gzip.NewWriter(out)
		defer func() {
			if cerr := gz.Close(); err == nil {
				err = cerr
			}
		}()
		w = gz
	case table.MetadataCompressionCodecZstd:
		enc, zerr := zstd.NewWriter(out)
		if zerr != nil {
			return zerr
		}
		defer func() {
			if cerr := enc.Close(); err == nil {
				err = cerr
			}
		}()
		w = enc
	default:
		return fmt.Errorf("metadata compression %q: want none, gzip or zstd", codec)
	}
	return json.NewEncoder(w).Encode(meta)
}
