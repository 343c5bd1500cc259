package catalog

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// DefaultName is the catalog used when none is named.
const DefaultName = "default"

// Settings are what the user said about which catalog to open, before
// resolution. Empty fields fall through to the environment, then the config
// file, then the defaults.
type Settings struct {
	Home       string // --home: the embedded catalog's folder
	Catalog    string // --catalog: the catalog's name in the config file
	ConfigFile string // --config: lakeswap.yaml or .iceberg-go.yaml
	// Getenv reads the environment; nil means os.Getenv.
	Getenv func(string) string
}

// Config is a resolved catalog: its name and the properties iceberg-go's
// catalog registry takes (type, uri, warehouse, s3.endpoint, ...). Embedded
// is true for the built-in SQLite catalog, whose files live under Home.
type Config struct {
	Name     string
	Props    map[string]string
	Embedded bool
	Home     string
	Source   string // where the properties came from, for messages
	// Jobs are the job files and folders lakeswap.yaml lists, each
	// relative to the file's folder made absolute.
	Jobs []string
}

// Environment variables lakeswap reads. Credentials are never among them:
// those come from the AWS chain (AWS_ACCESS_KEY_ID, profiles, ...).
const (
	EnvHome      = "LAKESWAP_HOME"
	EnvCatalog   = "LAKESWAP_CATALOG"
	EnvConfig    = "LAKESWAP_CONFIG"
	EnvURI       = "LAKESWAP_CATALOG_URI"
	EnvWarehouse = "LAKESWAP_CATALOG_WAREHOUSE"
)

// Resolve applies flag > environment > config file > default.
func Resolve(s Settings) (Config, error) {
	getenv := s.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	pick := func(flag, env, def string) string {
		if flag != "" {
			return flag
		}
		if v := getenv(env); v != "" {
			return v
		}
		return def
	}
	home := pick(s.Home, EnvHome, ".lakeswap")
	absHome, err := filepath.Abs(home)
	if err != nil {
		return Config{}, fmt.Errorf("home %s: %w", home, err)
	}

	file, explicit := pick(s.ConfigFile, EnvConfig, ""), true
	if file == "" {
		explicit = false
		// A home named on purpose (--home, LAKESWAP_HOME) with no catalog
		// named is the embedded catalog there: a lakeswap.yaml that happens
		// to lie in the folder must not send the run to another catalog,
		// a production one perhaps.
		homeNamed := s.Home != "" || getenv(EnvHome) != ""
		if !homeNamed || pick(s.Catalog, EnvCatalog, "") != "" {
			file = findConfigFile(getenv)
		}
	}
	var doc configFile
	if file != "" {
		raw, err := os.ReadFile(file)
		if err != nil && (explicit || !errors.Is(err, os.ErrNotExist)) {
			return Config{}, fmt.Errorf("read catalog config %s: %w", file, err)
		}
		if err := yaml.Unmarshal(raw, &doc); err != nil {
			return Config{}, fmt.Errorf("parse catalog config %s: %w", file, err)
		}
	}
	if (file == "" && !explicit) || isPyIceberg(file) {
		// PyIceberg's environment overrides its file, as in PyIceberg; a
		// lakeswap.yaml or .iceberg-go.yaml found first wins over both.
		if pyIcebergEnv(getenv, &doc) && file == "" {
			file = "PYICEBERG_CATALOG__* environment variables"
		}
	}

	name := pick(s.Catalog, EnvCatalog, doc.DefaultCatalog)
	if name == "" {
		name = DefaultName
	}
	props, found := doc.Catalogs[name]
	// A config file that defines catalogs but names none to use is a
	// mistake, not a wish for the embedded catalog: a publish there would
	// land in a local folder unseen. (PyIceberg refuses it too.)
	if !found && name == DefaultName && len(doc.Catalogs) > 0 {
		return Config{}, fmt.Errorf("%s defines the catalogs %s but none is chosen: set default-catalog in it, or pass --catalog (or LAKESWAP_CATALOG)",
			file, strings.Join(sortedNames(doc.Catalogs), ", "))
	}
	cfg := Config{Name: name, Home: absHome, Props: map[string]string{}, Source: file}
	for _, j := range doc.Jobs {
		if !filepath.IsAbs(j) {
			j = filepath.Join(filepath.Dir(file), j)
		}
		cfg.Jobs = append(cfg.Jobs, j)
	}
	if found {
		flatten("", props, cfg.Props)
		for _, k := range credentialKeys {
			if _, ok := cfg.Props[k]; ok {
				where := file
				if isPyIceberg(file) || strings.HasPrefix(file, "PYICEBERG_") {
					where = file + " or its PYICEBERG_CATALOG__" + strings.ToUpper(name) + "__* variables"
				}
				return Config{}, fmt.Errorf("catalog %q in %s sets %s: lakeswap takes object-store credentials only from the AWS chain (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE, ...); remove it from there", name, where, k)
			}
		}
		// iceberg-go's own file spells two keys its own way.
		renameKey(cfg.Props, "sql-driver", "sql.driver")
		renameKey(cfg.Props, "sql-dialect", "sql.dialect")
	}
	sqlAlchemyURI(cfg.Props)
	if v := getenv(EnvURI); v != "" {
		cfg.Props["uri"] = v
	}
	if v := getenv(EnvWarehouse); v != "" {
		cfg.Props["warehouse"] = v
	}
	if len(cfg.Props) == 0 {
		if name != DefaultName {
			return Config{}, fmt.Errorf("catalog %q is not configured (looked in %s); add it under catalog: in lakeswap.yaml, or omit --catalog to use the embedded catalog in %s",
				name, orNone(file), absHome)
		}
		cfg.Embedded = true
		cfg.Source = "embedded"
		cfg.Props = embeddedProps(absHome)
	}
	if cfg.Props["type"] == "" {
		cfg.Props["type"] = typeOf(cfg.Props["uri"])
	}
	return cfg, nil
}

// Missing reports whether the catalog is the embedded one and has not
// been made yet: the first command that writes makes it, and a command
// that only reads says there is none rather than make it.
func (c Config) Missing() bool {
	if !c.Embedded {
		return false
	}
	_, err := os.Stat(filepath.Join(c.Home, "catalog.db"))
	return errors.Is(err, fs.ErrNotExist)
}

// ErrNoCatalog is a command that reads asked of an embedded catalog that
// was never made.
var ErrNoCatalog = errors.New("no catalog here")

// NoCatalog says there is no catalog where a command that reads looked,
// and how to make one or name another.
func NoCatalog(c Config) error {
	return fmt.Errorf("%w: lakeswap looked in catalog %s (embedded, in %s), which no command has made yet (lakeswap.yaml, ~/.iceberg-go.yaml and the environment name no other); "+
		"`lakeswap table create --schema FILE` makes it there (or `lakeswap demo` a demo one), or name yours with --catalog, --config or --home", ErrNoCatalog, c.Name, c.Home)
}

// credentialKeys are properties iceberg-go would take credentials from; a
// config file that holds them is refused, so that no secret sits in a file
// lakeswap reads or is handed on.
var credentialKeys = []string{"s3.access-key-id", "s3.secret-access-key", "s3.session-token",
	"glue.access-key-id", "glue.secret-access-key", "glue.session-token",
	"client.access-key-id", "client.secret-access-key", "client.session-token"}

// embeddedProps is the default catalog: iceberg-go's SQL catalog on SQLite in
// home/catalog.db with a warehouse of local files in home/warehouse. The busy
// timeout lets concurrent writers wait for the lock instead of failing with
// SQLITE_BUSY.
func embeddedProps(home string) map[string]string {
	return map[string]string{
		"type":        "sql",
		"sql.driver":  "sqlite",
		"sql.dialect": "sqlite",
		"uri":         "file:" + filepath.Join(home, "catalog.db") + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)",
		"warehouse":   "file://" + filepath.Join(home, "warehouse"),
	}
}

// configFile is lakeswap.yaml, which shares its shape with iceberg-go's
// .iceberg-go.yaml and PyIceberg's .pyiceberg.yaml: catalogs by name, each a
// map of properties (nested maps are joined with dots: s3: {endpoint: x} is
// s3.endpoint).
type configFile struct {
	DefaultCatalog string                    `yaml:"default-catalog"`
	Catalogs       map[string]map[string]any `yaml:"catalog"`
	// Jobs are the job files (or folders of them) whose sources say
	// which table reads which: lakeswap lineage and --downstream.
	Jobs []string `yaml:"jobs"`
}

func sortedNames(m map[string]map[string]any) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func findConfigFile(getenv func(string) string) string {
	candidates := []string{"lakeswap.yaml"}
	home, _ := os.UserHomeDir()
	if dir := getenv("GOICEBERG_HOME"); dir != "" {
		candidates = append(candidates, filepath.Join(dir, ".iceberg-go.yaml"))
	} else if home != "" {
		candidates = append(candidates, filepath.Join(home, ".iceberg-go.yaml"))
	}
	// PyIceberg's, last: a team on PyIceberg already says where its
	// catalog is.
	if dir := getenv("PYICEBERG_HOME"); dir != "" {
		candidates = append(candidates, filepath.Join(dir, pyIcebergFile))
	} else if home != "" {
		candidates = append(candidates, filepath.Join(home, pyIcebergFile))
	}
	for _, c := range candidates {
		if _, err := os.Stat(c); err == nil {
			return c
		}
	}
	return ""
}

func flatten(prefix string, in map[string]any, out map[string]string) {
	for k, v := range in {
		key := k
		if prefix != "" {
			key = prefix + "." + k
		}
		switch v := v.(type) {
		case map[string]any:
			flatten(key, v, out)
		case nil:
		default:
			out[key] = fmt.Sprint(v)
		}
	}
}

func renameKey(m map[string]string, from, to string) {
	if v, ok := m[from]; ok {
		if _, set := m[to]; !set {
			m[to] = v
		}
		delete(m, from)
	}
}

func orNone(file string) string {
	if file == "" {
		return "no config file: none of lakeswap.yaml, ~/.iceberg-go.yaml, ~/.pyiceberg.yaml exists, and no PYICEBERG_CATALOG__* variable is set"
	}
	return file
}

// pyIcebergFile is PyIceberg's config file, in the home folder or
// PYICEBERG_HOME.
const pyIcebergFile = ".pyiceberg.yaml"

func isPyIceberg(file string) bool { return filepath.Base(file) == pyIcebergFile }

// pyIcebergEnv adds PyIceberg's catalog variables to doc, over what its
// file says: PYICEBERG_CATALOG__<NAME>__<KEY>=value, where a double
// underscore in the key is a dot and a single one a dash
// (PYICEBERG_CATALOG__PROD__S3__ENDPOINT is catalog prod's s3.endpoint),
// and PYICEBERG_DEFAULT_CATALOG names the catalog to use. It reports
// whether any was set.
func pyIcebergEnv(getenv func(string) string, doc *configFile) bool {
	found := false
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		rest, ok := strings.CutPrefix(k, "PYICEBERG_CATALOG__")
		if !ok {
			continue
		}
		name, key, ok := strings.Cut(rest, "__")
		v := getenv(k)
		if !ok || name == "" || key == "" || v == "" {
			continue
		}
		name = strings.ToLower(name)
		key = strings.ReplaceAll(strings.ReplaceAll(strings.ToLower(key), "__", "."), "_", "-")
		if doc.Catalogs == nil {
			doc.Catalogs = map[string]map[string]any{}
		}
		if doc.Catalogs[name] == nil {
			doc.Catalogs[name] = map[string]any{}
		}
		setPath(doc.Catalogs[name], key, v)
		found = true
	}
	if v := getenv("PYICEBERG_DEFAULT_CATALOG"); v != "" && doc.DefaultCatalog == "" {
		doc.DefaultCatalog = v
	}
	return found
}

// setPath sets a dotted key in nested maps, as a YAML file would hold it,
// replacing what the file had there.
func setPath(m map[string]any, key, v string) {
	head, rest, nested := strings.Cut(key, ".")
	if !nested {
		m[key] = v
		return
	}
	sub, ok := m[head].(map[string]any)
	if !ok {
		sub = map[string]any{}
		m[head] = sub
	}
	setPath(sub, rest, v)
}

// sqlAlchemyURI reads a PyIceberg SQL catalog's SQLAlchemy URI
// (postgresql+psycopg2://..., sqlite:///path) as iceberg-go's SQL catalog
// takes it: a driver, a dialect and the database's own URI.
func sqlAlchemyURI(props map[string]string) {
	uri := props["uri"]
	scheme, rest, ok := strings.Cut(uri, "://")
	if !ok || (props["type"] != "" && props["type"] != "sql") {
		return
	}
	dialect, _, _ := strings.Cut(scheme, "+")
	switch dialect {
	case "postgresql", "postgres":
		setDefault(props, "sql.driver", "pgx")
		setDefault(props, "sql.dialect", "postgres")
		props["uri"] = "postgres://" + rest
	case "sqlite":
		// sqlite:///catalog.db is a relative path, sqlite:////srv/c.db an
		// absolute one.
		setDefault(props, "sql.driver", "sqlite")
		setDefault(props, "sql.dialect", "sqlite")
		props["uri"] = "file:" + strings.TrimPrefix(rest, "/")
	}
}

// typeOf is the catalog type a URI implies when none is given, as
// PyIceberg infers it: http(s) is a REST catalog, thrift a Hive metastore,
// anything else SQL.
func typeOf(uri string) string {
	scheme, _, _ := strings.Cut(strings.ToLower(uri), "://")
	switch scheme {
	case "http", "https":
		return "rest"
	case "thrift":
		return "hive"
	}
	return "sql"
}

func setDefault(m map[string]string, k, v string) {
	if m[k] == "" {
		m[k] = v
	}
}

// ConfiguredJobs are the jobs lakeswap.yaml lists (jobs:), each relative
// to the file: the config file given (--config, LAKESWAP_CONFIG), else
// the one found as Resolve finds it, whatever home is named. No file, or
// one listing no jobs, gives none; a file that cannot be read or parsed
// is an error.
func ConfiguredJobs(given string, getenv func(string) string) ([]string, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	file := given
	if file == "" {
		file = getenv(EnvConfig)
	}
	if file == "" {
		file = findConfigFile(getenv)
	}
	if file == "" {
		return nil, nil
	}
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", file, err)
	}
	var doc configFile
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("parse %s: %w", file, err)
	}
	var out []string
	for _, j := range doc.Jobs {
		if !filepath.IsAbs(j) {
			j = filepath.Join(filepath.Dir(file), j)
		}
		out = append(out, j)
	}
	return out, nil
}
