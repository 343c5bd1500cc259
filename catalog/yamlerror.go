package catalog

import (
	"errors"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"
)

var (
	unknownKey = regexp.MustCompile(`^line (\d+): field (.*) not found in type \S+$`)
	wrongKind  = regexp.MustCompile("^line (\\d+): cannot unmarshal !!(\\w+)(?: `(.*)`)? into (\\S+)$")
)

// YAMLError says what a file's YAML could not be read as in a person's
// words: the YAML decoder names Go's types (field x not found in type
// catalog.ColumnSpec, cannot unmarshal !!seq into string).
func YAMLError(err error) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return err
	}
	msgs := make([]string, len(te.Errors))
	for i, m := range te.Errors {
		msgs[i] = plainYAML(m)
	}
	return errors.New(strings.Join(msgs, "; "))
}

func plainYAML(m string) string {
	if g := unknownKey.FindStringSubmatch(m); g != nil {
		s := "line " + g[1] + ": unknown key " + quoteKey(g[2])
		if strings.ContainsAny(g[2], "()") {
			// {name: x, type: decimal(12,2)} splits at the comma.
			s += ` (inside {...} a comma ends a value: quote a type such as "decimal(12,2)")`
		}
		return s
	}
	if g := wrongKind.FindStringSubmatch(m); g != nil {
		got := map[string]string{"seq": "a list", "map": "a mapping", "str": "text", "int": "a number", "float": "a number", "bool": "true or false", "null": "nothing"}[g[2]]
		if got == "" {
			got = "a " + g[2]
		}
		if g[3] != "" {
			got += " (" + g[3] + ")"
		}
		return "line " + g[1] + ": " + got + " where " + want(g[4]) + " belongs"
	}
	return m
}

func quoteKey(k string) string { return `"` + k + `"` }

// want names what a Go type holds.
func want(goType string) string {
	switch {
	case strings.HasPrefix(goType, "[]"):
		return "a list"
	case strings.HasPrefix(goType, "map["), strings.Contains(goType, "."):
		return "a mapping"
	case goType == "string":
		return "text"
	case goType == "bool":
		return "true or false"
	case strings.HasPrefix(goType, "int"), strings.HasPrefix(goType, "uint"), strings.HasPrefix(goType, "float"):
		return "a number"
	}
	return "another kind of value"
}
