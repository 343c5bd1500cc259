package main

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/lakeswap/lakeswap/runrecord"
	"github.com/lakeswap/lakeswap/source"
)

// versionInfo is what `lakeswap version` says: lakeswap's own version and
// commit, and the versions of what it is built on, for a bug report.
type versionInfo struct {
	Version   string `json:"version"`
	Commit    string `json:"commit,omitempty"`
	Modified  bool   `json:"modified,omitempty"` // built from a tree with changes
	Go        string `json:"go"`
	IcebergGo string `json:"iceberg_go,omitempty"`
	ArrowGo   string `json:"arrow_go,omitempty"`
	DuckDB    string `json:"duckdb,omitempty"` // duckdb-go, when the SQL engine is built in
	SQLEngine bool   `json:"sql_engine"`
}

// buildVersion reads what the binary was built from.
func buildVersion() versionInfo {
	v := versionInfo{Version: runrecord.Version, Go: runtime.Version(), SQLEngine: source.Engine == "duckdb"}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	if mv := info.Main.Version; mv != "" && mv != "(devel)" {
		v.Version = strings.TrimPrefix(mv, "v")
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Commit = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	for _, d := range info.Deps {
		switch {
		case d.Path == "github.com/apache/iceberg-go":
			v.IcebergGo = d.Version
		case d.Path == "github.com/apache/arrow-go/v18":
			v.ArrowGo = d.Version
		case strings.HasPrefix(d.Path, "github.com/duckdb/duckdb-go") && v.SQLEngine:
			v.DuckDB = d.Version
		}
	}
	return v
}

func (v versionInfo) String() string {
	s := "lakeswap " + v.Version
	if v.Commit != "" {
		s += " (commit " + v.Commit
		if v.Modified {
			s += ", modified"
		}
		s += ")"
	}
	return s
}

type versionOptions struct{}

func newVersionCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print lakeswap's version and commit, and the versions of Go, iceberg-go, arrow-go and DuckDB",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return runVersion(cmd.Context(), g, versionOptions{}) },
	}
}

func runVersion(_ context.Context, g *globals, _ versionOptions) error {
	v := buildVersion()
	return g.emit(v, func(w io.Writer) {
		fmt.Fprintln(w, v)
		fmt.Fprintf(w, "  go %s, iceberg-go %s, arrow-go %s\n", v.Go, orUnknown(v.IcebergGo), orUnknown(v.ArrowGo))
		if v.SQLEngine {
			fmt.Fprintf(w, "  SQL engine: embedded DuckDB (duckdb-go %s)\n", orUnknown(v.DuckDB))
		} else {
			fmt.Fprintln(w, "  SQL engine: not built in (built with -tags noduckdb): --job and CSV inputs need it")
		}
	})
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
