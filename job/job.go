package job

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/lakeswap/lakeswap/catalog"
	"github.com/lakeswap/lakeswap/runrecord"
	"github.com/lakeswap/lakeswap/source"
	"github.com/lakeswap/lakeswap/swap"
)

// Job is a job file, read and checked.
type Job struct {
	// Table is the table the job recomputes, NAMESPACE.NAME.
	Table string `yaml:"table"`
	// Sources are what the SQL reads, by the name it reads them as.
	Sources map[string]Source `yaml:"sources"`
	// SQL computes the rows of the partitions from $from to $to, both
	// included, as the partition column's values.
	SQL     string `yaml:"sql"`
	SQLFile string `yaml:"sql_file"`
	// Rejects name source rows the job refuses, with why: rows matching a
	// rule's condition (SQL over the source's columns) are counted by
	// reason and written beside the run, never dropped silently.
	Rejects []Reject `yaml:"rejects"`
	// Lookback is how late a source row is expected to arrive at most:
	// rows later than that after their event are reported by the plan (and
	// by lag), so that a backfill's range can reach back far enough.
	Lookback Duration `yaml:"lookback"`
	// Lag says how to measure arrival: the source, and SQL expressions on
	// its columns for when a row's event happened and when it arrived.
	Lag Lag `yaml:"lag"`
	// Late says what a run does with source rows that arrived later than
	// the lookback into partitions already published (escalate, the
	// default, refuses until the run decides).
	OnLate LatePolicy `yaml:"late"`
	// Reconcile is a query on the sources giving, per partition, the
	// figures the staged rows must match (count and sums at the source's
	// own grain).
	Reconcile string `yaml:"reconcile"`
	// ReconcileTolerance is how far a staged figure may lie from the
	// reconciliation's before the run is refused, by figure (rows, or an
	// additive column): an amount (100, 0.50) or a share (0.1%). Left
	// out, figures must match exactly.
	ReconcileTolerance map[string]string `yaml:"reconcile_tolerance"`

	// File is the job file, and Dir the folder it is in: relative paths
	// are read from there.
	File string `yaml:"-"`
	Dir  string `yaml:"-"`
	// Version is the SHA-256 of the job file and its SQL.
	Version string `yaml:"-"`
	// listed maps each file the engine reads (a local copy) to the name
	// the listing gives it, once Prepare made them.
	listed map[string]string
}

// Source is one input of the job, bound to a name the SQL reads: files,
// or an Iceberg table pinned to a snapshot.
type Source struct {
	// Path is a local file, glob or folder, or an s3:// prefix or glob.
	Path string `yaml:"path"`
	// Table is an Iceberg table of the catalog, NAMESPACE.NAME, read as of
	// Snapshot (0: the snapshot main holds when the run lists its
	// sources, which the run then records).
	Table    string `yaml:"table"`
	Snapshot int64  `yaml:"snapshot"`
	// Partitions says, of a table source, how the job's partitions follow
	// from the table's: "same" (a partition of the source feeds the job's
	// partition of the same value: a day, its day), "month" (a day of the
	// source feeds the job's month of that day) or "all" (any partition
	// of the source feeds every partition of the job), the default.
	// lakeswap lineage prints it; a release (--downstream) rebuilds the
	// partitions it names.
	Partitions Mapping `yaml:"partitions"`
	// Format is csv, ndjson or parquet; empty takes it from the files'
	// extension.
	Format string `yaml:"format"`
	// CSV says how the source's CSV files are written where they are not
	// in the plain form (a comma between fields, double quotes, a header
	// line): delimiter, quote, null_marker, header: false with columns,
	// rename.
	CSV source.CSVForm `yaml:"csv"`
}

// Lag names what lakeswap lag measures: ingested - event, per source row.
type Lag struct {
	Source   string `yaml:"source"` // may be left out in a job of one source
	Event    string `yaml:"event_time"`
	Ingested string `yaml:"ingested_at"`
}

// LatePolicy is what a run does with source rows that arrived later than
// the job's lookback after their event into a partition already
// published: restating it changes numbers people already reported.
type LatePolicy struct {
	// Policy is escalate (the default: the run is refused, naming the
	// partitions, until it says --restate or --leave, with a reason),
	// restate (such rows rebuild their partitions, recorded) or
	// current-period (such rows load into the day they arrived, the
	// source gaining the boolean column Flag, true for them).
	Policy runrecord.Late `yaml:"policy"`
	// Owner is who makes the call (the metric's owner), Note what they
	// said: both shown when a run is refused.
	Owner string `yaml:"owner"`
	Note  string `yaml:"note"`
	Flag  string `yaml:"flag"`
}

// Reject is a rule that refuses source rows, with its reason.
type Reject struct {
	// Source is the source whose rows it judges; it may be left out in a
	// job of one source.
	Source string `yaml:"source"`
	Reason string `yaml:"reason"`
	// When is an SQL condition on the source's columns; a row it holds
	// true for is refused (null counts as false).
	When string `yaml:"when"`
}

// Duration is a time.Duration written as "48h" or "2d".
type Duration time.Duration

// UnmarshalYAML reads "48h", "90m" or a number of days, "2d".
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	s := strings.TrimSpace(n.Value)
	if days, ok := strings.CutSuffix(s, "d"); ok {
		var v int
		if _, err := fmt.Sscanf(days, "%d", &v); err != nil || v < 0 || fmt.Sprint(v) != days {
			return fmt.Errorf("lookback %q: want a duration such as 48h, or a whole number of days such as 2d", s)
		}
		*d = Duration(time.Duration(v) * 24 * time.Hour)
		return nil
	}
	v, err := time.ParseDuration(s)
	if err != nil || v < 0 {
		return fmt.Errorf("lookback %q: want a duration such as 48h, or a whole number of days such as 2d", s)
	}
	*d = Duration(v)
	return nil
}

// sourceName is what the SQL can read a source as: a plain identifier.
var sourceName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,62}$`)

// Load reads and checks a job file.
func Load(path string) (*Job, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read job %s: %w", path, err)
	}
	var j Job
	dec := yaml.NewDecoder(strings.NewReader(string(raw)))
	dec.KnownFields(true)
	if err := dec.Decode(&j); err != nil {
		return nil, fmt.Errorf("job %s: %w", path, catalog.YAMLError(err))
	}
	// Absolute, so that the listing (which names the files) is the same
	// whatever folder the job is run from.
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	j.File, j.Dir = abs, filepath.Dir(abs)
	sql := []byte(j.SQL)
	if j.SQLFile != "" {
		if j.SQL != "" {
			return nil, fmt.Errorf("job %s: give the SQL as sql or as sql_file, not both", path)
		}
		if sql, err = os.ReadFile(j.resolve(j.SQLFile)); err != nil {
			return nil, fmt.Errorf("job %s: read its SQL: %w", path, err)
		}
		j.SQL = string(sql)
	}
	if err := j.check(); err != nil {
		return nil, fmt.Errorf("job %s: %w", path, err)
	}
	// The version covers what the job computes: the file (sources,
	// rejects, lookback, reconciliation) and the SQL it runs, each
	// length-prefixed so that no two jobs hash alike.
	h := sha256.New()
	fmt.Fprintf(h, "lakeswap-job-v1\n%d\n", len(raw))
	h.Write(raw)
	fmt.Fprintf(h, "\n%d\n", len(sql))
	h.Write(sql)
	j.Version = hex.EncodeToString(h.Sum(nil))
	return &j, nil
}

func (j *Job) check() error {
	var errs []error
	if j.Table == "" {
		errs = append(errs, errors.New("name the table it recomputes (table: NAMESPACE.NAME)"))
	}
	if len(j.Sources) == 0 {
		errs = append(errs, errors.New("name at least one source (sources: {NAME: {path: ...}})"))
	}
	seen := map[string]string{}
	for _, name := range j.SourceNames() {
		s := j.Sources[name]
		// The engine's names ignore case.
		if other, dup := seen[strings.ToLower(name)]; dup {
			errs = append(errs, fmt.Errorf("sources %s and %s: the SQL cannot tell them apart (names ignore case)", other, name))
		}
		seen[strings.ToLower(name)] = name
		switch {
		case !sourceName.MatchString(name):
			errs = append(errs, fmt.Errorf("source %q: a name the SQL reads must be a plain identifier (letters, digits, _)", name))
		case (s.Path == "") == (s.Table == ""):
			errs = append(errs, fmt.Errorf("source %s: give its path, or its table", name))
		case s.Table != "" && s.Format != "":
			errs = append(errs, fmt.Errorf("source %s: a table's files are Parquet; leave format out", name))
		case s.Table == "" && s.Partitions != "":
			errs = append(errs, fmt.Errorf("source %s: partitions says how a table source's partitions feed the job's; a path's files have none", name))
		}
		switch s.Partitions {
		case "", MapSame, MapMonth, MapAll:
		default:
			errs = append(errs, fmt.Errorf("source %s: partitions %q: want same, month or all", name, s.Partitions))
		}
		switch s.Format {
		case "", "csv", "ndjson", "parquet":
		default:
			errs = append(errs, fmt.Errorf("source %s: format %q: want csv, ndjson or parquet", name, s.Format))
		}
		if s.CSV.Set() {
			if _, err := s.CSV.JobOptions(); err != nil {
				errs = append(errs, fmt.Errorf("source %s: csv: %w", name, err))
			}
			if s.Table != "" || s.Format == "ndjson" || s.Format == "parquet" {
				errs = append(errs, fmt.Errorf("source %s: csv says how CSV files are written; its files are not CSV", name))
			}
		}
	}
	if strings.TrimSpace(j.SQL) == "" {
		errs = append(errs, errors.New("give the SQL that computes the partitions (sql or sql_file)"))
	}
	errs = append(errs, j.checkLate()...)
	if len(j.ReconcileTolerance) > 0 && strings.TrimSpace(j.Reconcile) == "" {
		errs = append(errs, errors.New("reconcile_tolerance says how far figures may lie from the reconciliation's: give the reconcile: query too"))
	}
	for _, k := range slices.Sorted(maps.Keys(j.ReconcileTolerance)) {
		if _, err := swap.ParseTolerance(j.ReconcileTolerance[k]); err != nil {
			errs = append(errs, fmt.Errorf("reconcile_tolerance of %s: %w", k, err))
		}
	}
	for i, r := range j.Rejects {
		if strings.TrimSpace(r.Reason) == "" || strings.TrimSpace(r.When) == "" {
			errs = append(errs, fmt.Errorf("reject rule %d: give its reason and its condition (when)", i+1))
		}
		if _, ok := j.Sources[r.Source]; r.Source != "" && !ok || r.Source == "" && len(j.Sources) > 1 {
			errs = append(errs, fmt.Errorf("reject rule %d (%s): name the source it judges (source: NAME, one of %s)", i+1, r.Reason, strings.Join(j.SourceNames(), ", ")))
		}
	}
	return errors.Join(errs...)
}

// checkLate checks the late policy: what it needs of the lag, and a flag
// column for current-period.
func (j *Job) checkLate() []error {
	l := j.OnLate
	if l == (LatePolicy{}) {
		return nil
	}
	var errs []error
	switch l.Policy {
	case "", runrecord.LateEscalate, runrecord.LateRestate, runrecord.LateCurrentPeriod:
	default:
		errs = append(errs, fmt.Errorf("late: policy %q: want escalate, restate or current-period", l.Policy))
	}
	if _, ok := j.Sources[j.lagSource()]; !ok || j.Lag.Event == "" || j.Lag.Ingested == "" || j.Lookback <= 0 {
		errs = append(errs, errors.New("late: a late policy needs a lookback and lag: {event_time, ingested_at} on the source whose rows arrive"))
	}
	switch {
	case l.Policy == runrecord.LateCurrentPeriod && !sourceName.MatchString(l.Flag):
		errs = append(errs, fmt.Errorf("late: current-period needs flag: COLUMN, the boolean column the source gains (true for a row loaded into the day it arrived), for the SQL to keep; %q is not a plain column name", l.Flag))
	case l.Policy == runrecord.LateCurrentPeriod && !sourceName.MatchString(strings.TrimSpace(j.Lag.Event)):
		errs = append(errs, fmt.Errorf("late: current-period moves a late row by its event time: lag's event_time must be a column of the source, not %q", j.Lag.Event))
	case l.Policy != runrecord.LateCurrentPeriod && l.Flag != "":
		errs = append(errs, errors.New("late: flag goes with policy current-period"))
	}
	// The note is the reason policy restate records, in every later
	// metadata file, as --reason is.
	if len(l.Note) > 2000 || len(l.Owner) > 2000 {
		errs = append(errs, errors.New("late: note and owner are at most 2000 bytes each: point to the document"))
	}
	return errs
}

// lagSource is the source whose rows' arrival the lag names.
func (j *Job) lagSource() string {
	if j.Lag.Source == "" && len(j.Sources) == 1 {
		return j.SourceNames()[0]
	}
	return j.Lag.Source
}

// SourceNames lists the sources' names in order.
func (j *Job) SourceNames() []string {
	names := make([]string, 0, len(j.Sources))
	for name := range j.Sources {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// resolve reads a relative path from the job file's folder.
func (j *Job) resolve(p string) string {
	if filepath.IsAbs(p) || strings.Contains(p, "://") {
		return p
	}
	return filepath.Join(j.Dir, p)
}
