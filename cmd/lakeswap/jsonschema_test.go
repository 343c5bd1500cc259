package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/lakeswap/lakeswap/internal/doctor"
	"github.com/lakeswap/lakeswap/internal/exact"
	"github.com/lakeswap/lakeswap/internal/jsonid"
	"github.com/lakeswap/lakeswap/job"
	"github.com/lakeswap/lakeswap/swap"
	"github.com/lakeswap/lakeswap/swap/gc"
	"github.com/lakeswap/lakeswap/swap/history"
)

// results are the types each command prints with -o json on success,
// by command; a failure prints errorObject's jsonError with the result in
// it. docs/json holds a schema per command, made from these types.
var results = map[string][]any{
	"publish":        {planView{}, releaseView{}},
	"plan":           {planView{}, releaseView{}},
	"apply":          {planView{}, releaseView{}},
	"lineage":        {lineageResult{}},
	"check":          {checkResult{}},
	"show":           {swap.PlanFile{}, history.RunView{}},
	"diff":           {history.DiffView{}},
	"report":         {reportResult{}},
	"discard":        {discardResult{}},
	"plans":          {plansResult{}},
	"status":         {statusView{}},
	"verify":         {verifyRunView{}, verifyTableView{}},
	"repair-stats":   {repairView{}},
	"rollback":       {rollbackView{}},
	"history":        {historyResult{}},
	"gc":             {gc.Result{}},
	"lag":            {job.LagReport{}},
	"table create":   {tableCreated{}},
	"table describe": {swap.TableInfo{}},
	"table set":      {swap.TableInfo{}},
	"version":        {versionInfo{}},
	"doctor":         {doctor.Report{}},
	"demo":           {demoResult{}},
	"test":           {testResults{}},
}

var updateSchemas = flag.Bool("update-schemas", false, "write docs/json from the result types")

// schemaDir is docs/json, absolute: a test that changes its folder may
// print JSON checked against a schema not compiled yet.
var schemaDir = func() string {
	dir, err := filepath.Abs(filepath.Join("..", "..", "docs", "json"))
	if err != nil {
		panic(err)
	}
	return dir
}()

// schemaFile is the schema of a command's output: error.schema.json for a
// command that only fails (lakeswap's own usage errors, before any
// command, and those of a group such as table).
func schemaFile(command string) string {
	name := strings.TrimSpace(strings.TrimPrefix(command, "lakeswap"))
	if _, ok := results[name]; !ok {
		name = "error"
	}
	return filepath.Join(schemaDir, strings.ReplaceAll(name, " ", "-")+".schema.json")
}

// TestJSONSchemas: docs/json describes every command's -o json exactly as
// its result types print it: every field snake_case, ids as strings, lists
// as arrays (never null), no field unnamed. Run with -update-schemas to
// write it after changing a result.
func TestJSONSchemas(t *testing.T) {
	want := map[string][]byte{schemaFile(""): schemaFor("lakeswap", nil, t)}
	for command, types := range results {
		want[schemaFile("lakeswap "+command)] = schemaFor("lakeswap "+command, types, t)
	}
	if *updateSchemas {
		if err := os.MkdirAll(schemaDir, 0o755); err != nil {
			t.Fatal(err)
		}
		for file, b := range want {
			if err := os.WriteFile(file, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	for file, b := range want {
		got, err := os.ReadFile(file)
		if err != nil || !bytes.Equal(got, b) {
			t.Errorf("%s is not the schema of the command's result types (%v): run go test ./cmd/lakeswap -run TestJSONSchemas -args -update-schemas", file, err)
		}
	}
	entries, _ := os.ReadDir(schemaDir)
	for _, e := range entries {
		if f := filepath.Join(schemaDir, e.Name()); strings.HasSuffix(f, ".schema.json") && want[f] == nil {
			t.Errorf("%s describes no command", f)
		}
	}
}

// schemaFor is the JSON Schema of a command's output: one of its result
// types, or the error object with one of them as its result.
func schemaFor(command string, types []any, t *testing.T) []byte {
	r := &reflector{defs: map[string]any{}, t: t}
	var ok []any
	for _, v := range types {
		ok = append(ok, r.document(reflect.TypeOf(v)))
	}
	errSchema := r.document(reflect.TypeOf(jsonError{}))
	var resultOf any = map[string]any{"type": "null"}
	if len(ok) > 0 {
		resultOf = map[string]any{"anyOf": ok}
	}
	r.defs["main.jsonError"].(map[string]any)["properties"].(map[string]any)["result"] = resultOf
	doc := map[string]any{
		"$schema":     "https://json-schema.org/draft/2020-12/schema",
		"$id":         "https://github.com/lakeswap/lakeswap/docs/json/" + filepath.Base(schemaFile(command)),
		"title":       command + " -o json",
		"description": "What `" + command + " -o json` prints on stdout: its result on success, the error object (code, kind, message, hint, findings, result) on failure.",
		"anyOf":       append(ok, errSchema),
		"required":    []string{"schema_version"},
		"$defs":       r.defs,
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

// reflector makes JSON Schemas of Go types as encoding/json prints them.
type reflector struct {
	defs map[string]any
	t    *testing.T
}

// document is the schema of a type a command prints at the top: its
// fields and schema_version, which every document opens with.
func (r *reflector) document(t reflect.Type) any {
	ref := r.schema(t, false)
	def := r.defs[t.String()].(map[string]any)
	def["properties"].(map[string]any)["schema_version"] = map[string]any{"const": SchemaVersion}
	return ref
}

var snakeCase = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

func (r *reflector) schema(t reflect.Type, quoted bool) any {
	switch {
	case t == reflect.TypeOf(time.Time{}):
		return map[string]any{"type": "string", "format": "date-time"}
	case t.Kind() == reflect.Pointer:
		return r.schema(t.Elem(), quoted)
	case t == reflect.TypeOf(json.RawMessage{}):
		// The one document a plan keeps as JSON swap does not read is
		// the job's record of a run it computed.
		return r.schema(reflect.TypeOf(job.Info{}), quoted)
	case t == reflect.TypeOf(exact.Sum{}):
		// An exact sum: a number where every JSON reader holds it
		// exactly (within 2^53), else a string of its digits.
		return map[string]any{"oneOf": []any{
			map[string]any{"type": "integer", "minimum": -(1 << 53), "maximum": 1 << 53},
			map[string]any{"type": "string", "pattern": "^-?[0-9]+$"}}}
	case t == reflect.TypeOf(jsonid.Int(0)):
		return map[string]any{"type": "string", "pattern": "^-?[0-9]+$"}
	case t == reflect.TypeOf(jsonid.Ints{}):
		return map[string]any{"type": "array", "items": map[string]any{"type": "string", "pattern": "^-?[0-9]+$"}}
	case quoted && t.Kind() >= reflect.Int && t.Kind() <= reflect.Uint64:
		return map[string]any{"type": "string", "pattern": "^-?[0-9]+$"}
	}
	switch t.Kind() {
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return map[string]any{"type": "integer"}
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}
	case reflect.Slice, reflect.Array:
		return map[string]any{"type": "array", "items": r.schema(t.Elem(), false)}
	case reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": r.schema(t.Elem(), false)}
	case reflect.Interface:
		return map[string]any{}
	case reflect.Struct:
		name := t.String()
		if _, ok := r.defs[name]; !ok {
			def := map[string]any{"type": "object", "additionalProperties": false}
			r.defs[name] = def
			props, required := map[string]any{}, []string{}
			r.fields(t, props, &required)
			slices.Sort(required)
			def["properties"], def["required"] = props, required
		}
		return map[string]any{"$ref": "#/$defs/" + name}
	}
	r.t.Errorf("type %s has no JSON schema here", t)
	return map[string]any{}
}

// fields adds a struct's fields, and those of the structs it embeds, as
// encoding/json prints them.
func (r *reflector) fields(t reflect.Type, props map[string]any, required *[]string) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" || !f.IsExported() && !f.Anonymous {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			et := f.Type
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			r.fields(et, props, required)
			continue
		}
		if !f.IsExported() {
			continue
		}
		if !snakeCase.MatchString(name) {
			r.t.Errorf("%s.%s prints as %q: every field is named, in snake_case", t, f.Name, name)
			continue
		}
		s := r.schema(f.Type, strings.Contains(","+opts+",", ",string,"))
		if f.Type.Kind() == reflect.Pointer && !strings.Contains(opts, "omitempty") {
			s = map[string]any{"anyOf": []any{s, map[string]any{"type": "null"}}}
		}
		props[name] = s
		if !strings.Contains(opts, "omitempty") {
			*required = append(*required, name)
		}
	}
}

// printed collects every -o json output of the tests in this package that
// does not validate against its command's schema.
var printed struct {
	sync.Mutex
	schemas map[string]*jsonschema.Schema
	count   int
	bad     []string
}

// checkPrinted validates one output against its command's schema.
func checkPrinted(command string, out []byte) {
	printed.Lock()
	defer printed.Unlock()
	printed.count++
	file := schemaFile(command)
	s, ok := printed.schemas[file]
	if !ok {
		c := jsonschema.NewCompiler()
		var err error
		if s, err = c.Compile(file); err != nil {
			printed.bad = append(printed.bad, fmt.Sprintf("%s: %v", command, err))
			return
		}
		if printed.schemas == nil {
			printed.schemas = map[string]*jsonschema.Schema{}
		}
		printed.schemas[file] = s
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(out))
	if err == nil {
		err = s.Validate(doc)
	}
	if err != nil {
		printed.bad = append(printed.bad, fmt.Sprintf("%s printed what %s does not describe: %v\n%s", command, file, err, out))
	}
}

// validatePrinted fails the test run when any -o json output did not
// validate: every output of every test, not only of tests that look, in
// this process and in the lakeswap processes whose outputs log holds.
func validatePrinted(log string) int {
	raw, _ := os.ReadFile(log)
	for _, line := range bytes.Split(raw, []byte("\n")) {
		var rec struct {
			Command string          `json:"command"`
			Output  json.RawMessage `json:"output"`
		}
		if len(line) > 0 && json.Unmarshal(line, &rec) == nil {
			checkPrinted(rec.Command, rec.Output)
		}
	}
	printed.Lock()
	defer printed.Unlock()
	fmt.Fprintf(os.Stderr, "%d -o json outputs validated against docs/json, %d did not\n", printed.count, len(printed.bad))
	for _, b := range printed.bad {
		fmt.Fprintln(os.Stderr, "FAIL: -o json output:", b)
	}
	if len(printed.bad) > 0 {
		return 1
	}
	return 0
}

// TestJSONIDsAreStrings: every id (of a snapshot, schema, spec, plan, a
// sequence number) is a string in every command's JSON: a 64-bit id as a
// JSON number loses digits in JavaScript and jq.
func TestJSONIDsAreStrings(t *testing.T) {
	isID := regexp.MustCompile(`(^|_)(id|ids|snapshots?|sequence(_number)?)$`)
	var walk func(file, path string, node any)
	walk = func(file, path string, node any) {
		switch n := node.(type) {
		case map[string]any:
			if props, ok := n["properties"].(map[string]any); ok {
				for name, p := range props {
					if isID.MatchString(name) && hasInteger(p) {
						t.Errorf("%s: %s/%s is an id printed as a number", filepath.Base(file), path, name)
					}
				}
			}
			for k, v := range n {
				walk(file, path+"/"+k, v)
			}
		case []any:
			for _, v := range n {
				walk(file, path, v)
			}
		}
	}
	files, _ := filepath.Glob(filepath.Join(schemaDir, "*.schema.json"))
	if len(files) == 0 {
		t.Fatal("no schema in docs/json")
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var doc any
		if err := json.Unmarshal(raw, &doc); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		walk(f, "", doc)
	}
}

// hasInteger reports whether a property's schema allows an integer,
// itself or as the items of its list.
func hasInteger(s any) bool {
	m, ok := s.(map[string]any)
	if !ok {
		return false
	}
	if m["type"] == "integer" {
		return true
	}
	for _, k := range []string{"items", "anyOf", "oneOf"} {
		switch v := m[k].(type) {
		case map[string]any:
			if hasInteger(v) {
				return true
			}
		case []any:
			for _, e := range v {
				if hasInteger(e) {
					return true
				}
			}
		}
	}
	return false
}
