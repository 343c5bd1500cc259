package source

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// matchHeader matches a CSV header's names to the table's columns: by
// name, or, where no column has the name, by the one column whose name it
// is but for case (EVENT_ID for event_id). It returns the header with the
// table's names. A name that matches nothing is refused with what it may
// have meant: a column of a close name, or, where one name holds several
// columns' names and a separator, that the file is not split by commas.
func matchHeader(header []string, schema *arrow.Schema) ([]string, error) {
	out := slices.Clone(header)
	seen := map[string]bool{}
	for i, name := range header {
		if len(schema.FieldIndices(name)) == 0 {
			if folded, ok := foldMatch(name, header, schema); ok {
				out[i] = folded
			} else {
				return nil, &InputError{Line: 1, Column: name, Err: errors.New("column is not in the table schema" + suggestion(name, header, schema))}
			}
		}
		if seen[out[i]] {
			return nil, &InputError{Line: 1, Column: name, Err: errors.New("the header names this column twice")}
		}
		seen[out[i]] = true
	}
	return out, nil
}

// foldMatch finds the one column name equal to name but for case, that
// the header does not also name as it is.
func foldMatch(name string, header []string, schema *arrow.Schema) (string, bool) {
	var found []string
	for _, f := range schema.Fields() {
		if strings.EqualFold(f.Name, name) {
			found = append(found, f.Name)
		}
	}
	if len(found) != 1 || slices.Contains(header, found[0]) {
		return "", false
	}
	return found[0], true
}

// suggestion says what a header name that matches no column may mean.
func suggestion(name string, header []string, schema *arrow.Schema) string {
	for _, sep := range []string{";", "\t", "|"} {
		parts := strings.Split(name, sep)
		if len(parts) < 2 {
			continue
		}
		known := 0
		for _, p := range parts {
			if len(schema.FieldIndices(strings.TrimSpace(p))) > 0 {
				known++
			}
		}
		if known*2 >= len(parts) {
			return fmt.Sprintf(" (the header looks separated by %s, not commas: pass --delimiter %s)", sepName(sep), shellSep(sep))
		}
	}
	if close := closest(name, schema); close != "" {
		return fmt.Sprintf(" (did you mean %s?)", close)
	}
	known := 0
	for _, h := range header {
		if len(schema.FieldIndices(h)) > 0 {
			known++
		}
	}
	if known == 0 {
		return "; no name of the first line is a column of the table: if the file has no header, pass --no-header with --columns naming its columns in order"
	}
	return ""
}

func sepName(sep string) string {
	switch sep {
	case "\t":
		return "tabs"
	case "|":
		return "'|'"
	}
	return "'" + sep + "'"
}

func shellSep(sep string) string {
	if sep == "\t" {
		return "tab"
	}
	return "'" + sep + "'"
}

// closest is the column name nearest name, within a few edits (a third of
// its length, at least one, case aside), or "".
func closest(name string, schema *arrow.Schema) string {
	best, bestD := "", max(1, len(name)/3)+1
	for _, f := range schema.Fields() {
		if d := editDistance(strings.ToLower(name), strings.ToLower(f.Name)); d < bestD {
			best, bestD = f.Name, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance of a and b, by bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
