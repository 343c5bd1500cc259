package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/apache/iceberg-go/table"
	"github.com/spf13/cobra"

	"github.com/lakeswap/lakeswap/catalog"
	"github.com/lakeswap/lakeswap/outcome"
	"github.com/lakeswap/lakeswap/s3store"
	"github.com/lakeswap/lakeswap/source"
	"github.com/lakeswap/lakeswap/swap"
	"github.com/lakeswap/lakeswap/verify"
)

// Exit codes, documented in --help and the README.
const (
	exitOK             = 0
	exitError          = 1
	exitUsage          = 2
	exitRefused        = 3
	exitConflict       = 4
	exitUnknown        = 5
	exitVerifyFailed   = 6
	exitRollbackRefuse = 7
	// exitLandedUnverified: main holds the new run, unchecked (or found
	// wrong and not rolled back).
	exitLandedUnverified = 8
	exitCancelled        = 130
)

const exitCodesHelp = `Exit codes:
  0    success
  1    error (catalog, storage, a commit the table shows did not land, or anything not listed below)
  2    usage: a flag, argument or selector is wrong
  3    refused by validation: nothing was committed, staged files removed
  4    commit conflict: a commit since the plan touched a planned partition (or rolled main back, or
       changed the schema), or a plan's staged files changed; nothing was committed
  5    commit outcome unknown: 'lakeswap status --table T --run ID' answers later whether it landed
  6    verification failed after the commit and it was rolled back (kept with --no-auto-rollback)
  7    rollback refused (main moved past the run: --scoped undoes only its partitions, --force drops
       the later commits; or a later commit touched a --scoped rollback's partitions)
  8    landed, not verified: main holds the new run, but it could not be read back to check it (or
       was found wrong and could not be rolled back); 'lakeswap verify --run ID' finishes the check
  130  cancelled`

// usageError marks an error in how the command was called.
type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }
func (u usageError) Unwrap() error { return u.err }

// interrupted says a run stopped by Ctrl-C (or SIGTERM) in words: Go's
// context says "context canceled".
type interrupted struct{ err error }

func (i interrupted) Error() string {
	return strings.ReplaceAll(i.err.Error(), context.Canceled.Error(), "interrupted")
}
func (i interrupted) Unwrap() error { return i.err }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// requestError is a request that cannot be carried out as given (an input
// that does not exist, a job file that does not read): exit 2, as a usage
// error, without the command's usage, which is not what is wrong.
type requestError struct{ err error }

func (r requestError) Error() string { return r.err.Error() }
func (r requestError) Unwrap() error { return r.err }

// exitCode maps an error to its documented exit code.
func exitCode(err error) int {
	var u usageError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &u), errors.As(err, new(requestError)), errors.As(err, new(*source.NotAFileError)), errors.Is(err, outcome.ErrInvalidRequest):
		return exitUsage
	// An unknown commit outcome outranks a cancellation that caused it: the
	// operator must check history before running again.
	case errors.Is(err, outcome.ErrCommitUnknown):
		return exitUnknown
	// A check of a landed commit stopped by Ctrl-C or a read error, or a
	// rollback that failed, leaves main holding the run.
	case errors.Is(err, outcome.ErrLandedUnverified):
		return exitLandedUnverified
	case errors.Is(err, outcome.ErrVerifyFailed):
		return exitVerifyFailed
	case errors.Is(err, context.Canceled):
		return exitCancelled
	case errors.Is(err, outcome.ErrRefused), errors.As(err, new(*source.InputError)):
		return exitRefused
	case errors.Is(err, outcome.ErrConflict):
		return exitConflict
	case errors.Is(err, outcome.ErrRollbackRefused):
		return exitRollbackRefuse
	}
	return exitError
}

// jsonError is what --output json prints on stdout when a command fails.
type jsonError struct {
	// RunID, SnapshotID and Status are the failed command's result's, where
	// it has them, at the top as on success; Status is else the kind.
	RunID      string           `json:"run_id,omitempty"`
	SnapshotID int64            `json:"snapshot_id,omitempty,string"`
	Status     string           `json:"status"`
	Code       int              `json:"code"`
	Kind       string           `json:"kind"`
	Message    string           `json:"message"`
	Hint       string           `json:"hint,omitempty"`
	Findings   []verify.Finding `json:"findings,omitempty"`
	Result     any              `json:"result,omitempty"`
}

// errorKinds name the exit codes in JSON.
var errorKinds = map[int]string{
	exitError: "error", exitUsage: "usage", exitRefused: "refused", exitConflict: "conflict",
	exitUnknown: "commit-unknown", exitVerifyFailed: "verify-failed", exitRollbackRefuse: "rollback-refused",
	exitCancelled: "cancelled", exitLandedUnverified: "landed-unverified",
}

func errorObject(code int, err error, result any) jsonError {
	o := jsonError{Code: code, Kind: errorKinds[code], Message: err.Error(), Result: result}
	if errors.Is(err, outcome.ErrRunNotFound) {
		o.Kind = "not-found"
	}
	o.RunID, o.SnapshotID, o.Status = topLevel(result, o.Kind)
	var op *outcome.OpError
	if errors.As(err, &op) && op.Hint != "" {
		// The hint is a field of its own, not repeated in the message.
		o.Hint = op.Hint
		o.Message = strings.Replace(o.Message, "\nhint: "+op.Hint, "", 1)
	}
	var refused *outcome.RefusedError
	var input *source.InputError
	switch {
	case errors.As(err, &refused):
		o.Findings = refused.Findings
	case errors.As(err, &input):
		f := verify.Finding{Kind: verify.KindInput, Column: input.Column, Message: input.Err.Error(), Where: input.File}
		if input.Line > 0 {
			f.Where = fmt.Sprintf("%s:%d", input.File, input.Line)
		}
		o.Findings = []verify.Finding{f}
	}
	return o
}

// globals are the flags every command takes.
type globals struct {
	home, catalogName, configFile string
	output                        string
	verbose                       int // -v 1, -vv 2
	stdout, stderr                io.Writer
	getenv                        func(string) string
	// command is the command line's command ("lakeswap table describe").
	command string
	// failed is the result of a command that failed, kept for the JSON
	// error object instead of printed on its own.
	failed any
	// props are the opened catalog's properties, for reading inputs on S3
	// with the same settings.
	props map[string]string
	// uploadBudget, when set before the catalog is opened, is the memory
	// one S3 upload may hold; uploads are the properties S3 uploads are
	// made with, their parts sized to it.
	uploadBudget int64
	uploads      map[string]string
	// catalog names the opened catalog and where it was configured, for
	// messages that depend on which catalog was asked.
	catalog string
	// writes is set by a command that may change a table or its files,
	// which names the catalog it opens on stderr.
	writes bool
}

// describeCatalog names a catalog and where it was chosen, without its
// properties (which may hold a DSN).
func describeCatalog(cfg catalog.Config) string {
	if cfg.Embedded {
		return fmt.Sprintf("%s (embedded, in %s)", cfg.Name, cfg.Home)
	}
	return fmt.Sprintf("%s (from %s)", cfg.Name, orEnvironment(cfg.Source))
}

func orEnvironment(source string) string {
	if source == "" {
		return "the environment"
	}
	return source
}

func (g *globals) json() bool { return g.output == "json" }

// catalogFlags are the flags that chose the catalog, as given, for a
// command lakeswap prints to be run next.
func (g *globals) catalogFlags() string {
	var b strings.Builder
	for _, f := range [][2]string{{"--home", g.home}, {"--config", g.configFile}, {"--catalog", g.catalogName}} {
		if f[1] != "" {
			fmt.Fprintf(&b, " %s %s", f[0], f[1])
		}
	}
	return b.String()
}

func (g *globals) logger() *slog.Logger {
	level := slog.LevelWarn
	switch {
	case g.verbose >= 2:
		level = slog.LevelDebug
	case g.verbose == 1:
		level = slog.LevelInfo
	}
	return slog.New(slog.NewTextHandler(g.stderr, &slog.HandlerOptions{Level: level}))
}

// open resolves and opens the catalog, and wires its storage: for tables on
// S3 the returned context carries the AWS configuration from the standard
// chain, and the publisher stages through lakeswap's S3 store.
func (g *globals) open(ctx context.Context) (context.Context, *catalog.Catalog, *swap.Publisher, error) {
	cfg, err := catalog.Resolve(catalog.Settings{Home: g.home, Catalog: g.catalogName, ConfigFile: g.configFile, Getenv: g.getenv})
	if err != nil {
		return ctx, nil, nil, err
	}
	g.props, g.catalog = cfg.Props, describeCatalog(cfg)
	if g.uploadBudget > 0 && s3store.UsesS3(cfg.Props) {
		cfg.Props = s3store.FitUploads(cfg.Props, g.uploadBudget)
		g.logger().Info("s3 uploads", "part-size", cfg.Props[s3store.PropPartSize], "parts-in-flight", cfg.Props[s3store.PropPartsInFlight])
	}
	g.uploads = cfg.Props
	if !g.writes && cfg.Missing() {
		// A command that only reads never makes the embedded catalog.
		return ctx, nil, nil, catalog.NoCatalog(cfg)
	}
	if g.writes {
		// Which catalog a write goes to is never left to be guessed.
		fmt.Fprintf(g.stderr, "lakeswap: catalog %s\n", describeCatalog(cfg))
	}
	if g.verbose >= 2 {
		ctx = s3store.WithSDKLog(ctx, g.logger()) // the AWS SDK's own lines, at -vv only
	}
	ctx, cat, pub, err := openPublisher(ctx, cfg, g.logger())
	if pub != nil {
		pub.Catalog = catalogFault(pub.Catalog, g.getenv)
	}
	return ctx, cat, pub, err
}

// The caller closes the catalog.
func openPublisher(ctx context.Context, cfg catalog.Config, log *slog.Logger) (context.Context, *catalog.Catalog, *swap.Publisher, error) {
	log.Info("catalog", "name", cfg.Name, "source", cfg.Source, "embedded", cfg.Embedded)
	pub := &swap.Publisher{Logger: log}
	if s3store.UsesS3(cfg.Props) {
		var store *s3store.Store
		var err error
		if ctx, store, err = s3store.Attach(ctx, cfg.Props); err != nil {
			return ctx, nil, nil, err
		}
		pub.StagingIO = store.StagingIO()
	}
	cat, err := catalog.Open(ctx, cfg)
	if err != nil {
		return ctx, nil, nil, err
	}
	pub.Catalog = cat
	return ctx, cat, pub, nil
}

// report prints the result of a command that may have failed: the text
// form either way, but in JSON only on success, since a failure prints one
// JSON error object that carries the result.
func (g *globals) report(v any, err error, text func(io.Writer)) error {
	if err != nil && g.json() {
		g.failed = v
		return err
	}
	if perr := g.emit(v, text); perr != nil {
		return perr
	}
	return err
}

// emit prints a result: JSON when --output json, else the text form.
func (g *globals) emit(v any, text func(io.Writer)) error {
	if g.json() {
		return writeJSON(g.stdout, g.command, v)
	}
	text(g.stdout)
	return nil
}

// textWritten, when set (by tests), sees all a run of lakeswap printed,
// to check every message for what a person should never read (Go's
// syntax).
var textWritten func(args []string, stdout, stderr []byte)

// jsonWritten, when set (by tests), sees every JSON object lakeswap
// prints, with the command that printed it, to check it against the
// command's schema under docs/json.
var jsonWritten func(command string, out []byte)

// writeJSON prints v as one indented JSON object. A list or map that Go
// holds as nil is printed empty, never null: docs/json promises scripts
// a list wherever there is one.
func writeJSON(w io.Writer, command string, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(nonNil(v)); err != nil {
		return err
	}
	versioned(&b)
	if jsonWritten != nil {
		jsonWritten(command, b.Bytes())
	}
	_, err := w.Write(b.Bytes())
	return err
}

// SchemaVersion is the version of the JSON lakeswap prints, the first
// field of every document: it changes only when a field is renamed,
// removed or given another type (docs/scripts.md).
const SchemaVersion = 1

// versioned writes schema_version first in the object b holds.
func versioned(b *bytes.Buffer) {
	raw := b.Bytes()
	if !bytes.HasPrefix(raw, []byte("{\n")) {
		return
	}
	rest := bytes.Clone(raw[2:])
	b.Truncate(2)
	fmt.Fprintf(b, "  \"schema_version\": %d,\n", SchemaVersion)
	b.Write(rest)
}

func newRoot(g *globals) *cobra.Command {
	root := &cobra.Command{
		Use:   "lakeswap",
		Short: "Publish backfills to Iceberg tables: replace exactly the declared partitions, verify, roll back",
		Long: `lakeswap makes a historical backfill safe to run twice and safe to undo. Each run writes its
partitions' rows to a fresh prefix, validates and fingerprints them, commits one Iceberg snapshot that
replaces exactly the declared partitions (only if main is still where the plan found it), reads the
commit back and compares fingerprints. Every run is recorded in the snapshot it commits.

With no catalog configured, lakeswap uses an embedded catalog (SQLite + local files) in ./.lakeswap.

` + exitCodesHelp,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	pf := root.PersistentFlags()
	pf.StringVar(&g.home, "home", "", "folder of the embedded catalog (env LAKESWAP_HOME; default ./.lakeswap)")
	pf.StringVar(&g.catalogName, "catalog", "", "catalog name in lakeswap.yaml or ~/.iceberg-go.yaml (env LAKESWAP_CATALOG)")
	pf.StringVar(&g.configFile, "config", "", "catalog config file (env LAKESWAP_CONFIG; default ./lakeswap.yaml, then ~/.iceberg-go.yaml)")
	pf.StringVarP(&g.output, "output", "o", "text", "result format: text or json")
	pf.CountVarP(&g.verbose, "verbose", "v", "log progress to stderr (-vv: and debug detail)")
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		g.command = cmd.CommandPath()
		if g.output != "text" && g.output != "json" {
			return usagef("--output %q: want text or json", g.output)
		}
		return nil
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		// pflag passes on strconv's words: "strconv.ParseInt: parsing "x":
		// invalid syntax".
		if i := strings.Index(err.Error(), ": strconv.Parse"); i >= 0 {
			return usagef("%s: not a number", err.Error()[:i])
		}
		return usageError{err}
	})
	root.AddCommand(newTableCmd(g), newPublishCmd(g), newPlanCmd(g), newApplyCmd(g), newDiscardCmd(g), newPlansCmd(g), newShowCmd(g), newDiffCmd(g), newReportCmd(g), newRollbackCmd(g), newHistoryCmd(g), newStatusCmd(g), newVerifyCmd(g), newRepairStatsCmd(g), newGCCmd(g), newLagCmd(g), newLineageCmd(g), newCheckCmd(g), newDemoCmd(g), newVersionCmd(g), newDoctorCmd(g), newTestCmd(g))
	root.Version = buildVersion().String()
	root.SetVersionTemplate("{{.Version}}\n")
	needSubcommands(root)
	return root
}

// needSubcommands makes a command that only groups others (table) refuse
// to run alone or with an unknown subcommand, as a usage error: cobra would
// print its help and exit 0, and a script would take that for success.
func needSubcommands(root *cobra.Command) {
	for _, c := range root.Commands() {
		needSubcommands(c)
		if c.Runnable() || !c.HasSubCommands() {
			continue
		}
		c.Args = cobra.ArbitraryArgs
		c.RunE = func(cmd *cobra.Command, args []string) error {
			var names []string
			for _, sub := range cmd.Commands() {
				if sub.IsAvailableCommand() {
					names = append(names, sub.Name())
				}
			}
			if len(args) > 0 {
				return usagef("unknown command %q for %q (its commands: %s)", args[0], cmd.CommandPath(), strings.Join(names, ", "))
			}
			return usagef("%s needs a command: %s", cmd.CommandPath(), strings.Join(names, ", "))
		}
	}
}

// Main runs lakeswap with args and returns the exit code; main is the only
// caller of os.Exit.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return mainWithEnv(ctx, args, stdout, stderr, nil)
}

func mainWithEnv(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	if getenv == nil {
		getenv = os.Getenv
	}
	if textWritten != nil {
		var out, errb bytes.Buffer
		defer func() { textWritten(args, out.Bytes(), errb.Bytes()) }()
		stdout, stderr = io.MultiWriter(stdout, &out), io.MultiWriter(stderr, &errb)
	}
	g := &globals{stdout: stdout, stderr: stderr, getenv: getenv}
	root := newRoot(g)
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return exitOK
	}
	code := exitCode(err)
	if code == exitError && isCobraUsage(err) {
		code = exitUsage
	}
	if errors.Is(err, context.Canceled) {
		// Also when Ctrl-C stopped the check of a landed commit (exit 8).
		err = interrupted{err}
	}
	if code == exitCancelled && g.writes && !strings.Contains(err.Error(), "hint:") {
		// Stopped before a step that says what it leaves: before anything
		// was staged or committed.
		err = fmt.Errorf("%w\nhint: nothing was committed, and nothing had been staged", err)
	}
	if errors.Is(err, catalog.ErrNoSuchTable) && g.catalog != "" {
		// Which catalog was asked is the first thing to check.
		err = fmt.Errorf("%w\nhint: lakeswap looked in catalog %s; name another with --catalog, --config or --home", err, g.catalog)
	}
	if g.json() || wantsJSON(args) {
		o := errorObject(code, err, g.failed)
		if o.RunID == "" {
			o.RunID = flagValue(args, "--run", "--run-id") // the run asked about
		}
		_ = writeJSON(stdout, g.command, o)
	}
	fmt.Fprintf(stderr, "lakeswap: %v\n", err)
	if code == exitUsage && (errors.As(err, new(usageError)) || isCobraUsage(err)) {
		// The cause stays the last thing read: one line points at the
		// help of the command that was meant, where one was found.
		path := "lakeswap"
		if cmd != nil && cmd != root {
			path = cmd.CommandPath()
		}
		fmt.Fprintf(stderr, "Run '%s --help' for usage.\n", path)
	}
	return code
}

// flagValue is the last value args give any of the named long flags.
func flagValue(args []string, names ...string) string {
	v := ""
	for i, a := range args {
		if a == "--" {
			break
		}
		for _, n := range names {
			switch {
			case a == n && i+1 < len(args):
				v = args[i+1]
			case strings.HasPrefix(a, n+"="):
				v = strings.TrimPrefix(a, n+"=")
			}
		}
	}
	return v
}

// wantsJSON reports whether args ask for JSON output, for errors cobra
// meets before it has parsed --output (an unknown flag or command before it).
func wantsJSON(args []string) bool {
	output := ""
	for i, a := range args {
		if a == "--" {
			break
		}
		switch {
		case strings.HasPrefix(a, "--output="):
			output = strings.TrimPrefix(a, "--output=")
		case (a == "-o" || a == "--output") && i+1 < len(args):
			output = args[i+1]
		case strings.HasPrefix(a, "-o") && !strings.HasPrefix(a, "--"):
			output = strings.TrimPrefix(strings.TrimPrefix(a, "-o"), "=")
		}
	}
	return output == "json" // the last one given wins, as in flag parsing
}

// isCobraUsage recognises the usage errors cobra itself returns.
func isCobraUsage(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand", "required flag", "accepts ", "requires "} {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}

// tableFlag reads --table, which a command needs.
func tableFlag(name string) (table.Identifier, error) {
	if name == "" {
		return nil, usagef("--table is required: the table, as NAMESPACE.NAME")
	}
	return swap.ParseTable(name)
}

// tableNotArg refuses arguments of a command that names its table with
// --table: a table given as an argument is told where it goes.
func tableNotArg(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	if len(args) == 1 && strings.Count(args[0], ".") == 1 && !strings.HasPrefix(args[0], "-") {
		return usagef("%s takes the table as --table %s, not as an argument", cmd.CommandPath(), args[0])
	}
	return usagef("%s takes no arguments (got %s)", cmd.CommandPath(), strings.Join(args, " "))
}
