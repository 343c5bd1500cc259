package source

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// CSVForm is how a CSV input is written, as a person states it: on the
// command line (--delimiter, --quote, --null, --no-header, --columns,
// --column-map) or in a job's source (its csv: block).
type CSVForm struct {
	// Delimiter is the character between fields: one character, or
	// "tab"; empty for a comma.
	Delimiter string `yaml:"delimiter"`
	// Quote is the character that quotes a value (doubled inside one):
	// one ASCII character; empty for a double quote.
	Quote string `yaml:"quote"`
	// Null is the field that stands for null in any column. (A key
	// null in YAML is the null value, not this name.)
	Null string `yaml:"null_marker"`
	// Header false says the first line is a row; Columns then names the
	// file's columns in order.
	Header  *bool    `yaml:"header"`
	Columns []string `yaml:"columns"`
	// Rename maps a name of the file to the table column it holds.
	Rename map[string]string `yaml:"rename"`
}

// Options checks the form and gives the options that read it; an error
// says which setting is wrong and what it takes.
func (f CSVForm) Options() (CSVOptions, error) {
	o := CSVOptions{Null: f.Null, NoHeader: f.Header != nil && !*f.Header, Columns: f.Columns, Rename: f.Rename}
	switch d := f.Delimiter; {
	case d == "":
	case d == "tab" || d == `\t`:
		o.Delimiter = '\t'
	case utf8.RuneCountInString(d) == 1 && d != "\n" && d != "\r" && d != `"`:
		o.Delimiter, _ = utf8.DecodeRuneInString(d)
	default:
		return o, fmt.Errorf("delimiter %q: want one character, e.g. ';', '|' or tab", d)
	}
	switch q := f.Quote; {
	case q == "":
	case len(q) == 1 && q[0] < utf8.RuneSelf && q != "\n" && q != "\r" && rune(q[0]) != o.Delimiter && !(o.Delimiter == 0 && q == ","):
		o.Quote = q[0]
	default:
		return o, fmt.Errorf("quote %q: want one ASCII character other than the delimiter, e.g. ' (default: a double quote)", q)
	}
	if o.Quote == '"' && o.Delimiter == '"' {
		return o, errors.New(`the delimiter and the quote are both "`)
	}
	if o.NoHeader != (len(o.Columns) > 0) {
		return o, errors.New("no header and columns go together: the columns name, in order, the columns of a file that has no header line")
	}
	seen := map[string]string{}
	for from, to := range f.Rename {
		if to == "" || from == "" {
			return o, fmt.Errorf("the column map takes %q to %q: both names are needed", from, to)
		}
		if other, ok := seen[to]; ok {
			a, b := min(from, other), max(from, other)
			return o, fmt.Errorf("the column map takes both %s and %s to %s", a, b, to)
		}
		seen[to] = from
	}
	if n := len(o.Columns); n > 0 {
		if c := slices.Clone(o.Columns); len(slices.Compact(sortStrings(c))) != n {
			return o, errors.New("the columns name a column twice")
		}
	}
	return o, nil
}

func sortStrings(s []string) []string { slices.Sort(s); return s }

// Set reports whether the form says anything.
func (f CSVForm) Set() bool {
	return f.Delimiter != "" || f.Quote != "" || f.Null != "" || f.Header != nil || len(f.Columns) > 0 || len(f.Rename) > 0
}

// JobOptions is Options for a SQL job's source, which the engine reads:
// the delimiter is one ASCII character too.
func (f CSVForm) JobOptions() (CSVOptions, error) {
	o, err := f.Options()
	if err == nil && o.Delimiter >= utf8.RuneSelf {
		err = fmt.Errorf("delimiter %q: a job's is one ASCII character", f.Delimiter)
	}
	return o, err
}

// dialect is the characters that split the file into fields.
func (o CSVOptions) dialect() dialect {
	d := plainDialect
	if o.Delimiter != 0 {
		d.delim = byte(o.Delimiter)
	}
	if o.Quote != 0 {
		d.quote = o.Quote
	}
	return d
}

// ReadColumnMap reads a column map: a YAML mapping of the file's names to
// the table's columns (EventID: event_id).
func ReadColumnMap(path string) (map[string]string, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var m map[string]string
	if err := yaml.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("column map %s: want a YAML mapping of the file's names to the table's columns (EventID: event_id): %w", path, err)
	}
	if len(m) == 0 {
		return nil, fmt.Errorf("column map %s maps no name", path)
	}
	return m, nil
}

// UnmarshalYAML reads a csv: block, refusing a key it does not know: a
// key written null is YAML's null value, and would be dropped unread.
func (f *CSVForm) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			switch {
			case k.Tag == "!!null":
				return fmt.Errorf("line %d: a key written null is YAML's null value: the field that stands for null is null_marker", k.Line)
			case !slices.Contains(csvFormKeys, k.Value):
				return fmt.Errorf("line %d: csv has no setting %q (it takes %s)", k.Line, k.Value, strings.Join(csvFormKeys, ", "))
			}
			// null_marker: NULL means the text NULL, though YAML reads
			// a bare NULL (null, ~) as its null value.
			if v := n.Content[i+1]; v.Kind == yaml.ScalarNode && v.Tag == "!!null" && v.Value != "" {
				v.Tag = "!!str"
			}
		}
	}
	type plain CSVForm
	return n.Decode((*plain)(f))
}

var csvFormKeys = []string{"delimiter", "quote", "null_marker", "header", "columns", "rename"}
