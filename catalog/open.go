package catalog

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"strings"
	"sync/atomic"

	"github.com/apache/iceberg-go"
	icebergcat "github.com/apache/iceberg-go/catalog"
	_ "github.com/apache/iceberg-go/catalog/glue"     // registers "glue"
	_ "github.com/apache/iceberg-go/catalog/hive"     // registers "hive"
	_ "github.com/apache/iceberg-go/catalog/rest"     // registers "rest"
	sqlcat "github.com/apache/iceberg-go/catalog/sql" // registers "sql"
	icebergconfig "github.com/apache/iceberg-go/config"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	gluetypes "github.com/aws/aws-sdk-go-v2/service/glue/types"
	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver, for a PostgreSQL SQL catalog
	_ "modernc.org/sqlite"             // the embedded catalog's SQLite driver
)

// ErrNoSuchTable is the catalog's answer for a table it does not hold.
var ErrNoSuchTable = icebergcat.ErrNoSuchTable

// ErrConflict marks a commit the catalog refused because the table moved
// since it was planned: nothing was committed, and a fresh plan may succeed.
// It matches iceberg-go's table.ErrCommitFailed, whose words ("refresh and
// try again") are not what a lakeswap user does next, so it has its own.
var ErrConflict error = conflictError{}

type conflictError struct{}

func (conflictError) Error() string        { return "commit conflict" }
func (conflictError) Is(target error) bool { return target == table.ErrCommitFailed }

// Catalog is an opened iceberg-go catalog that counts its commits and tells a
// lost compare-and-swap apart from a commit whose outcome is unknown.
type Catalog struct {
	icebergcat.Catalog
	Config  Config
	commits atomic.Int64
}

var _ table.CatalogIO = (*Catalog)(nil)

// Open opens the catalog cfg describes.
func Open(ctx context.Context, cfg Config) (*Catalog, error) {
	if cfg.Embedded {
		if err := os.MkdirAll(cfg.Home, 0o755); err != nil {
			return nil, fmt.Errorf("create lakeswap home %s: %w", cfg.Home, err)
		}
	}
	props := iceberg.Properties{}
	for k, v := range cfg.Props {
		props[k] = v
	}
	cat, err := load(ctx, cfg.Name, props)
	if err != nil {
		return nil, fmt.Errorf("open catalog %s (%s): %w", cfg.Name, cfg.Source, err)
	}
	return Wrap(cat, cfg), nil
}

// load opens the catalog as iceberg-go's registry does, but a SQL catalog
// on a database server on the process's pool of its connections
// (sharedDB), which closing the catalog leaves open.
func load(ctx context.Context, name string, props iceberg.Properties) (icebergcat.Catalog, error) {
	driver, dialect := props[sqlcat.DriverKey], strings.ToLower(props[sqlcat.DialectKey])
	if props["type"] != "sql" || !pooled(driver) || dialect == "" || name == "" {
		return icebergcat.Load(ctx, name, props)
	}
	// What the registry takes from iceberg-go's own configuration file
	// where lakeswap's leaves it out.
	conf := icebergconfig.EnvConfig.Catalogs[name]
	props = maps.Clone(props)
	props["uri"] = props.Get("uri", conf.URI)
	props["credential"] = props.Get("credential", conf.Credential)
	props["warehouse"] = props.Get("warehouse", conf.Warehouse)
	db, err := sharedDB(driver, strings.TrimPrefix(props.Get("uri", ""), "sql://"))
	if err != nil {
		return nil, err
	}
	return sqlcat.NewCatalog(name, db, sqlcat.SupportedDialect(dialect), props)
}

// Wrap puts an already opened catalog behind lakeswap's commit accounting.
func Wrap(cat icebergcat.Catalog, cfg Config) *Catalog {
	return &Catalog{Catalog: cat, Config: cfg}
}

// Commits is how many commits this catalog has been asked to make.
func (c *Catalog) Commits() int64 { return c.commits.Load() }

// Close releases the catalog's connections where it holds any.
func (c *Catalog) Close() error {
	if cl, ok := c.Catalog.(interface{ Close() error }); ok {
		return cl.Close()
	}
	return nil
}

// LoadTable loads a table whose commits go through this wrapper.
func (c *Catalog) LoadTable(ctx context.Context, ident table.Identifier) (*table.Table, error) {
	tbl, err := c.Catalog.LoadTable(ctx, ident)
	if errors.Is(err, ErrNoSuchTable) {
		return nil, missingTable(strings.Join(ident, "."))
	}
	if err != nil {
		return nil, err
	}
	return c.adopt(tbl), nil
}

// missingTable is ErrNoSuchTable naming the table as a person writes it
// (iceberg-go's catalogs name it as a Go slice: [shop daily_sales]).
type missingTable string

func (m missingTable) Error() string { return "there is no table " + string(m) + " in the catalog" }
func (m missingTable) Unwrap() error { return ErrNoSuchTable }

// CreateTable creates a table whose commits go through this wrapper.
func (c *Catalog) CreateTable(ctx context.Context, ident table.Identifier, sc *iceberg.Schema, opts ...icebergcat.CreateTableOpt) (*table.Table, error) {
	tbl, err := c.Catalog.CreateTable(ctx, ident, sc, opts...)
	if err != nil {
		return nil, err
	}
	return c.adopt(tbl), nil
}

func (c *Catalog) adopt(tbl *table.Table) *table.Table {
	return table.New(tbl.Identifier(), tbl.Metadata(), tbl.MetadataLocation(),
		func(ctx context.Context) (icebergio.IO, error) { return tbl.FS(ctx) }, c)
}

// CommitTable commits through the catalog, its error classified.
func (c *Catalog) CommitTable(ctx context.Context, ident table.Identifier, reqs []table.Requirement, updates []table.Update) (table.Metadata, string, error) {
	c.commits.Add(1)
	meta, loc, err := c.Catalog.CommitTable(ctx, ident, reqs, updates)
	return meta, loc, classify(err)
}

// classify tells a commit the catalog refused before applying anything, an
// ErrConflict, from one whose outcome is unknown: every other error, to be
// settled by reading the table. Each catalog says it its own way:
//   - REST: 409 CommitFailedException (iceberg-go's rest.ErrCommitFailed);
//     500, 502, 503 and 504 are rest.ErrCommitStateUnknown, unknown;
//   - Glue: ConcurrentModificationException, its version check failing;
//   - Hive: the table's lock not acquired;
//   - SQL, Glue and Hive: a requirement that fails when the updates are
//     staged, before anything is written ("requirement failed: branch main
//     has changed"), a plain error that iceberg-go would take as unknown.
func classify(err error) error {
	if err == nil || errors.Is(err, ErrConflict) {
		return err
	}
	var cme *gluetypes.ConcurrentModificationException
	if errors.Is(err, table.ErrCommitFailed) || errors.As(err, &cme) ||
		strings.HasPrefix(strings.ToLower(err.Error()), "requirement failed") {
		return fmt.Errorf("%w: %w", ErrConflict, err)
	}
	return err
}

// ParseIdent reads a table name as NS.NAME (nested namespaces: A.B.NAME).
func ParseIdent(name string) (table.Identifier, error) {
	parts := strings.Split(name, ".")
	if len(parts) < 2 || strings.Contains(name, "..") || parts[len(parts)-1] == "" || parts[0] == "" {
		return nil, fmt.Errorf("table name %q: want NAMESPACE.TABLE, for example retail.daily_orders", name)
	}
	return parts, nil
}
