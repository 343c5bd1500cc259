package catalog_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lakeswap/lakeswap/catalog"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

const configYAML = `default-catalog: shared
catalog:
  shared:
    type: sql
    uri: file:/srv/lake/catalog.db
    sql-driver: sqlite
    sql-dialect: sqlite
    warehouse: file:///srv/lake/warehouse
    s3:
      endpoint: http://127.0.0.1:9000
  other:
    type: sql
    uri: file:/srv/other.db
`

func TestResolvePrecedence(t *testing.T) {
	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "lakeswap.yaml")
	if err := os.WriteFile(cfgFile, []byte(configYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name     string
		settings catalog.Settings
		env      map[string]string
		wantName string
		wantURI  string
		embedded bool
	}{
		{"nothing configured: embedded", catalog.Settings{ConfigFile: os.DevNull, Home: dir}, nil, "default", "file:" + filepath.Join(dir, "catalog.db"), true},
		{"file's default catalog", catalog.Settings{ConfigFile: cfgFile}, nil, "shared", "file:/srv/lake/catalog.db", false},
		{"environment names the catalog", catalog.Settings{ConfigFile: cfgFile}, map[string]string{catalog.EnvCatalog: "other"}, "other", "file:/srv/other.db", false},
		{"flag beats environment", catalog.Settings{ConfigFile: cfgFile, Catalog: "shared"}, map[string]string{catalog.EnvCatalog: "other"}, "shared", "file:/srv/lake/catalog.db", false},
		{"environment overrides the file's uri", catalog.Settings{ConfigFile: cfgFile}, map[string]string{catalog.EnvURI: "file:/elsewhere.db"}, "shared", "file:/elsewhere.db", false},
		{"config file from the environment", catalog.Settings{}, map[string]string{catalog.EnvConfig: cfgFile}, "shared", "file:/srv/lake/catalog.db", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.settings.Getenv = env(tc.env)
			cfg, err := catalog.Resolve(tc.settings)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Name != tc.wantName || !strings.HasPrefix(cfg.Props["uri"], tc.wantURI) || cfg.Embedded != tc.embedded {
				t.Errorf("resolved %s (embedded %v) uri %s; want %s (embedded %v) uri %s", cfg.Name, cfg.Embedded, cfg.Props["uri"], tc.wantName, tc.embedded, tc.wantURI)
			}
		})
	}
}

func TestResolveReadsIcebergGoKeys(t *testing.T) {
	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "lakeswap.yaml")
	if err := os.WriteFile(cfgFile, []byte(configYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := catalog.Resolve(catalog.Settings{ConfigFile: cfgFile, Getenv: env(nil)})
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"sql.driver": "sqlite", "sql.dialect": "sqlite", "s3.endpoint": "http://127.0.0.1:9000"} {
		if cfg.Props[k] != want {
			t.Errorf("property %s = %q, want %q", k, cfg.Props[k], want)
		}
	}
}

func TestResolveRefusesCredentialsInTheFile(t *testing.T) {
	cfgFile := filepath.Join(t.TempDir(), "lakeswap.yaml")
	yaml := "catalog:\n  default:\n    type: sql\n    s3.secret-access-key: hunter2\n"
	if err := os.WriteFile(cfgFile, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := catalog.Resolve(catalog.Settings{ConfigFile: cfgFile, Getenv: env(nil)})
	if err == nil || !strings.Contains(err.Error(), "s3.secret-access-key") || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("err = %v, want a refusal naming the key and not the value", err)
	}
}

func TestResolveUnknownCatalog(t *testing.T) {
	_, err := catalog.Resolve(catalog.Settings{ConfigFile: os.DevNull, Catalog: "prod", Getenv: env(nil)})
	if err == nil || !strings.Contains(err.Error(), `catalog "prod" is not configured`) {
		t.Errorf("err = %v, want one saying catalog prod is not configured", err)
	}
}

func TestHomeFromEnvironment(t *testing.T) {
	dir := t.TempDir()
	cfg, err := catalog.Resolve(catalog.Settings{ConfigFile: os.DevNull, Getenv: env(map[string]string{catalog.EnvHome: dir})})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Home != dir || cfg.Props["warehouse"] != "file://"+filepath.Join(dir, "warehouse") {
		t.Errorf("home %s, warehouse %s; want both under %s", cfg.Home, cfg.Props["warehouse"], dir)
	}
}

func TestTableSpecRefusesBadSchema(t *testing.T) {
	cases := map[string]catalog.TableSpec{
		"unknown type":            {Columns: []catalog.ColumnSpec{{Name: "a", Type: "varchar"}}},
		"optional identifier":     {Columns: []catalog.ColumnSpec{{Name: "a", Type: "long"}}, Identifier: []string{"a"}},
		"identifier not a column": {Columns: []catalog.ColumnSpec{{Name: "a", Type: "long", Required: true}}, Identifier: []string{"b"}},
		"unknown transform":       {Columns: []catalog.ColumnSpec{{Name: "d", Type: "date"}}, Partition: []catalog.PartitionSpec{{Column: "d", Transform: "hash[4]"}}},
		"a void transform":        {Columns: []catalog.ColumnSpec{{Name: "d", Type: "date"}}, Partition: []catalog.PartitionSpec{{Column: "d", Transform: "void"}}},
		"a bucket of a boolean":   {Columns: []catalog.ColumnSpec{{Name: "d", Type: "boolean"}}, Partition: []catalog.PartitionSpec{{Column: "d", Transform: "bucket[4]"}}},
		"additive not a column":   {Columns: []catalog.ColumnSpec{{Name: "a", Type: "long"}}, Additive: []string{"b"}},
		"a band of NaN":           {Columns: []catalog.ColumnSpec{{Name: "a", Type: "long"}}, Properties: map[string]string{"lakeswap.plausible-band": "NaN:2"}},
		// What every publish would refuse is refused at create.
		"a double additive": {Columns: []catalog.ColumnSpec{{Name: "a", Type: "double"}}, Additive: []string{"a"}},
		"a string additive": {Columns: []catalog.ColumnSpec{{Name: "a", Type: "string"}}, Additive: []string{"a"}},
		"an unknown check":  {Columns: []catalog.ColumnSpec{{Name: "a", Type: "long"}}, Checks: map[string][]string{"a": {"positive"}}},
	}
	for name, spec := range cases {
		if _, _, _, err := spec.Build(); err == nil {
			t.Errorf("%s: built without error", name)
		}
	}
	spec := catalog.TableSpec{
		Columns:    []catalog.ColumnSpec{{Name: "ts", Type: "timestamptz", Required: true}, {Name: "v", Type: "decimal(9,2)"}},
		Identifier: []string{"ts"},
		Partition:  []catalog.PartitionSpec{{Column: "ts", Transform: "month"}},
	}
	sc, part, props, err := spec.Build()
	if err != nil {
		t.Fatal(err)
	}
	if sc.Field(1).Type.String() != "decimal(9, 2)" || part.Field(0).Name != "ts_month" || props["commit.manifest-merge.enabled"] != "true" {
		t.Errorf("built %v, %v, %v", sc, part, props)
	}
}

// TestResolveNeedsAChosenCatalog: a config file that defines catalogs but
// chooses none is refused, rather than sending a publish to the embedded
// catalog in a local folder; naming one, or choosing it with --catalog,
// works.
func TestResolveNeedsAChosenCatalog(t *testing.T) {
	file := filepath.Join(t.TempDir(), "lakeswap.yaml")
	if err := os.WriteFile(file, []byte(strings.TrimPrefix(configYAML, "default-catalog: shared\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := catalog.Resolve(catalog.Settings{ConfigFile: file, Getenv: env(nil)})
	if err == nil || !strings.Contains(err.Error(), "other, shared but none is chosen") {
		t.Errorf("err = %v, want a refusal naming the catalogs", err)
	}
	cfg, err := catalog.Resolve(catalog.Settings{ConfigFile: file, Catalog: "shared", Getenv: env(nil)})
	if err != nil || cfg.Embedded || cfg.Name != "shared" {
		t.Errorf("with --catalog shared: %+v, %v", cfg, err)
	}
}

// TestNamedHomeBeatsAFoundFile: run in a folder holding a lakeswap.yaml
// whose default is a shared catalog, --home (or LAKESWAP_HOME) names the
// embedded catalog there and wins; with no home named the file's catalog
// is used; --catalog still picks one of the file's.
func TestNamedHomeBeatsAFoundFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "lakeswap.yaml"), []byte(configYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	for _, c := range []struct {
		name     string
		settings catalog.Settings
		env      map[string]string
		want     string
		embedded bool
	}{
		{"--home", catalog.Settings{Home: "test"}, nil, "default", true},
		{"LAKESWAP_HOME", catalog.Settings{}, map[string]string{catalog.EnvHome: "test"}, "default", true},
		{"nothing named", catalog.Settings{}, nil, "shared", false},
		{"--home and --catalog", catalog.Settings{Home: "test", Catalog: "other"}, nil, "other", false},
	} {
		c.settings.Getenv = env(c.env)
		cfg, err := catalog.Resolve(c.settings)
		if err != nil || cfg.Name != c.want || cfg.Embedded != c.embedded {
			t.Errorf("%s: resolved %s (embedded %v), %v; want %s (embedded %v)", c.name, cfg.Name, cfg.Embedded, err, c.want, c.embedded)
		}
		if c.embedded && cfg.Home != filepath.Join(dir, "test") {
			t.Errorf("%s: home %s, want %s", c.name, cfg.Home, filepath.Join(dir, "test"))
		}
	}
}
