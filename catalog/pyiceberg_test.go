package catalog_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lakeswap/lakeswap/catalog"
)

// TestResolvePyIcebergSetup: a team on PyIceberg has its catalog in
// ~/.pyiceberg.yaml (or PYICEBERG_HOME) and PYICEBERG_CATALOG__* variables,
// with SQLAlchemy URIs; lakeswap opens that catalog, not an embedded one,
// and a lakeswap.yaml beats it.
func TestResolvePyIcebergSetup(t *testing.T) {
	home := t.TempDir()
	t.Setenv("PYICEBERG_HOME", home)
	t.Chdir(t.TempDir()) // no lakeswap.yaml here
	t.Setenv("GOICEBERG_HOME", t.TempDir())
	file := filepath.Join(home, ".pyiceberg.yaml")
	if err := os.WriteFile(file, []byte(`catalog:
  default:
    type: sql
    uri: postgresql+psycopg2://lake@db.internal:5432/iceberg
    warehouse: s3://lake/warehouse
    s3:
      endpoint: http://minio:9000
`), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := catalog.Resolve(catalog.Settings{Getenv: os.Getenv})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"uri": "postgres://lake@db.internal:5432/iceberg", "sql.driver": "pgx", "sql.dialect": "postgres",
		"warehouse": "s3://lake/warehouse", "s3.endpoint": "http://minio:9000"}
	for k, v := range want {
		if cfg.Props[k] != v {
			t.Errorf("%s = %q, want %q (from %s)", k, cfg.Props[k], v, cfg.Source)
		}
	}
	if cfg.Embedded || cfg.Source != file {
		t.Errorf("resolved embedded %v from %s, want %s", cfg.Embedded, cfg.Source, file)
	}

	// The environment overrides PyIceberg's file, key by key, and names
	// another catalog.
	t.Setenv("PYICEBERG_CATALOG__DEFAULT__S3__ENDPOINT", "http://other:9000")
	t.Setenv("PYICEBERG_CATALOG__PROD__URI", "sqlite:////srv/prod.db")
	t.Setenv("PYICEBERG_CATALOG__PROD__TYPE", "sql")
	if cfg, err = catalog.Resolve(catalog.Settings{Getenv: os.Getenv}); err != nil || cfg.Props["s3.endpoint"] != "http://other:9000" {
		t.Errorf("the environment's endpoint: %v, %v", cfg.Props, err)
	}
	t.Setenv("PYICEBERG_DEFAULT_CATALOG", "prod")
	if cfg, err = catalog.Resolve(catalog.Settings{Getenv: os.Getenv}); err != nil || cfg.Name != "prod" || cfg.Props["uri"] != "file:/srv/prod.db" || cfg.Props["sql.driver"] != "sqlite" {
		t.Errorf("the environment's catalog: %s %v, %v", cfg.Name, cfg.Props, err)
	}

	// A catalog without a type is what its URI says, as in PyIceberg: a
	// REST catalog over http(s), a Hive metastore over thrift.
	for uri, typ := range map[string]string{"https://polaris.internal/api/catalog": "rest", "thrift://hms:9083": "hive"} {
		t.Setenv("PYICEBERG_CATALOG__LAKE__URI", uri)
		if cfg, err := catalog.Resolve(catalog.Settings{Catalog: "lake", Getenv: os.Getenv}); err != nil || cfg.Props["type"] != typ {
			t.Errorf("a catalog at %s: type %q, %v; want %s", uri, cfg.Props["type"], err, typ)
		}
	}
	os.Unsetenv("PYICEBERG_CATALOG__LAKE__URI")

	// Credentials stay in the AWS chain, from the environment as from a
	// file.
	t.Setenv("PYICEBERG_CATALOG__PROD__S3__SECRET_ACCESS_KEY", "not-here")
	if _, err := catalog.Resolve(catalog.Settings{Getenv: os.Getenv}); err == nil || !strings.Contains(err.Error(), "s3.secret-access-key") || strings.Contains(err.Error(), "not-here") {
		t.Errorf("a secret in PyIceberg's environment: %v", err)
	}
	os.Unsetenv("PYICEBERG_CATALOG__PROD__S3__SECRET_ACCESS_KEY")

	// A lakeswap.yaml found first wins over PyIceberg's setup.
	if err := os.WriteFile("lakeswap.yaml", []byte("catalog:\n  default:\n    uri: file:/srv/mine.db\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Unsetenv("PYICEBERG_DEFAULT_CATALOG")
	if cfg, err = catalog.Resolve(catalog.Settings{Getenv: os.Getenv}); err != nil || cfg.Props["uri"] != "file:/srv/mine.db" {
		t.Errorf("lakeswap.yaml beside PyIceberg's setup: %v, %v", cfg.Props, err)
	}
}

// TestPyIcebergFileWithoutDefault: a ~/.pyiceberg.yaml whose catalogs
// include no default, with none named, is refused (as PyIceberg refuses
// it) rather than read as a wish for the embedded catalog.
func TestPyIcebergFileWithoutDefault(t *testing.T) {
	home := t.TempDir()
	t.Setenv("PYICEBERG_HOME", home)
	t.Chdir(t.TempDir())
	t.Setenv("GOICEBERG_HOME", t.TempDir())
	if err := os.WriteFile(filepath.Join(home, ".pyiceberg.yaml"), []byte("catalog:\n  prod:\n    uri: https://polaris.internal/api/catalog\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := catalog.Resolve(catalog.Settings{Getenv: os.Getenv})
	if err == nil || !strings.Contains(err.Error(), "prod") || !strings.Contains(err.Error(), ".pyiceberg.yaml") {
		t.Fatalf("a PyIceberg file with no default: %+v, %v", cfg, err)
	}
	if cfg, err := catalog.Resolve(catalog.Settings{Catalog: "prod", Getenv: os.Getenv}); err != nil || cfg.Props["type"] != "rest" {
		t.Errorf("naming its catalog: %+v, %v", cfg, err)
	}
}
