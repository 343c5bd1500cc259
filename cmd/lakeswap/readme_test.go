package main

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/lakeswap/lakeswap/internal/retail"
)

// TestReadmeFirstBackfill follows README's "Your first backfill" as a
// newcomer types it: every command of its console blocks, verbatim, in a
// copy of examples/first-backfill with lakeswap on the PATH, and checks
// each output line the README quotes, in order. Ids the README shows from
// its own run (run ids, snapshot ids, the plan's id, times) stand for
// whatever this run printed in their place, the same one wherever the
// README repeats it, and a later command typing one gets this run's.
func TestReadmeFirstBackfill(t *testing.T) {
	followConsole(t, filepath.Join("..", "..", "README.md"), "## Your first backfill", firstBackfill)
}

// consoleStep is a command of a console block and the lines the block
// quotes of its output.
type consoleStep struct {
	command string
	want    []string
}

// consoleSteps reads the console blocks of a markdown file's section.
func consoleSteps(t *testing.T, path, heading string) []consoleStep {
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(raw)
	i := strings.Index(text, "\n"+heading+"\n")
	if i < 0 {
		t.Fatalf("%s has no section %q", path, heading)
	}
	text = text[i+1:]
	if j := strings.Index(text[len(heading):], "\n## "); j >= 0 {
		text = text[:len(heading)+j]
	}
	var steps []consoleStep
	in := false
	for _, line := range strings.Split(text, "\n") {
		switch {
		case line == "```console":
			in = true
		case in && line == "```":
			in = false
		case in && strings.HasPrefix(line, "$ "):
			steps = append(steps, consoleStep{command: strings.TrimPrefix(line, "$ ")})
		case in && len(steps) > 0:
			steps[len(steps)-1].want = append(steps[len(steps)-1].want, line)
		}
	}
	if len(steps) == 0 {
		t.Fatalf("%s, %q: no console blocks", path, heading)
	}
	return steps
}

// idToken finds what differs from run to run in a quoted line or a
// command: run ids, snapshot ids, times (as history and as a rejects
// file's name write them), and the 8 or 12 hex digits after
// "--approve ", "plan " at a line's start and "attempt ".
var idToken = regexp.MustCompile(`\d{8}T\d{6}Z-[0-9a-f]{8}|\d{8}T\d{6}\.\d{3}Z|\b\d{15,20}\b|\d{4}-\d\d-\d\d \d\d:\d\d:\d\d|(?:--approve |^plan |attempt |lakeswap-plan-fix-lisbon-)[0-9a-f]{8,12}\b`)

// idPattern is what an id of the kind of tok matches.
func idPattern(tok string) string {
	switch {
	case strings.Contains(tok, "T") && strings.Contains(tok, "Z-"):
		return `\d{8}T\d{6}Z-[0-9a-f]{8}`
	case strings.Contains(tok, "T") && strings.Contains(tok, "."):
		return `\d{8}T\d{6}\.\d{3}Z`
	case strings.Contains(tok, ":"):
		return `\d{4}-\d\d-\d\d \d\d:\d\d:\d\d`
	case regexp.MustCompile(`^\d+$`).MatchString(tok):
		return `\d{15,20}`
	}
	return `[0-9a-f]{8,12}`
}

// splitID cuts a prefixed token into its prefix and the id.
func splitID(tok string) (prefix, id string) {
	for _, p := range []string{"--approve ", "plan ", "attempt ", "lakeswap-plan-fix-lisbon-"} {
		if rest, ok := strings.CutPrefix(tok, p); ok {
			return p, rest
		}
	}
	return "", tok
}

// linePattern makes a quoted line a pattern: its text exact but for runs
// of two spaces or more (a table's padding, which an id's length moves),
// its ids those already seen or any of their kind; a line ending in " ..."
// matches the start of one.
func linePattern(line string, bound map[string]string) (*regexp.Regexp, []string) {
	prefixOnly := strings.HasSuffix(line, " ...")
	line = strings.TrimSuffix(line, " ...")
	literal := func(s string) string {
		return regexp.MustCompile(` {2,}`).ReplaceAllString(regexp.QuoteMeta(s), ` {2,}`)
	}
	var b strings.Builder
	var groups []string
	last := 0
	for _, m := range idToken.FindAllStringIndex(line, -1) {
		prefix, id := splitID(line[m[0]:m[1]])
		b.WriteString(literal(line[last:m[0]] + prefix))
		if v, ok := bound[id]; ok {
			b.WriteString(regexp.QuoteMeta(v))
		} else {
			b.WriteString("(" + idPattern(id) + ")")
			groups = append(groups, id)
		}
		last = m[1]
	}
	b.WriteString(literal(line[last:]))
	end := `\s*$`
	if prefixOnly {
		end = ""
	}
	return regexp.MustCompile("^" + b.String() + end), groups
}

// followConsole runs the console blocks of a section of a markdown file
// in a copy of the example folder dir.
func followConsole(t *testing.T, path, heading, dir string) {
	steps := consoleSteps(t, path, heading)
	root := t.TempDir()
	work := filepath.Join(root, "work")
	copyTree(t, dir, work)
	bin := filepath.Join(root, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(lakeswapBinary(t), filepath.Join(bin, "lakeswap")); err != nil {
		t.Fatal(err)
	}
	// A newcomer's shell: no catalog of lakeswap's settings, no AWS ones.
	env := []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"), "HOME=" + root, "PWD=" + work}
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "LAKESWAP_") && !strings.HasPrefix(name, "AWS_") && name != "PATH" && name != "HOME" && name != "PWD" {
			env = append(env, kv)
		}
	}
	bound := map[string]string{"$PWD": work}
	for _, s := range steps {
		command := idToken.ReplaceAllStringFunc(s.command, func(tok string) string {
			prefix, id := splitID(tok)
			if v, ok := bound[id]; ok {
				return prefix + v
			}
			return tok
		})
		cmd := exec.Command("sh", "-c", command)
		cmd.Dir, cmd.Env = work, env
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			t.Fatalf("$ %s\n%v:\n%s", command, err, out.String())
		}
		lines := strings.Split(out.String(), "\n")
		at := 0
		for _, want := range s.want {
			want = strings.ReplaceAll(want, "$PWD", work)
			re, groups := linePattern(want, bound)
			found := false
			for ; at < len(lines) && !found; at++ {
				m := re.FindStringSubmatch(lines[at])
				if m == nil {
					continue
				}
				found = true
				for i, id := range groups {
					if v, ok := bound[id]; ok && v != m[i+1] {
						found = false // the same id twice in the line, printed as two
					}
					bound[id] = m[i+1]
				}
			}
			if !found {
				t.Errorf("$ %s\nprinted no line (after those matched before) that the README quotes as\n  %s\nit printed:\n%s", command, want, out.String())
				break
			}
		}
	}
}

// copyTree copies the files of folder from into to, leaving out a
// catalog an earlier run by hand left there.
func copyTree(t *testing.T, from, to string) {
	err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if d.IsDir() && d.Name() == ".lakeswap" {
			return filepath.SkipDir
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		raw, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), raw, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestRetailExampleShipsTheFixture: the raw events examples/retail ships
// are the retail fixture's, byte for byte, so that the example and the
// demo tell of the same events.
func TestRetailExampleShipsTheFixture(t *testing.T) {
	for name, want := range map[string][]byte{"batch1.ndjson": retail.Batch1, "batch2.ndjson": retail.Batch2} {
		got, err := os.ReadFile(filepath.Join("..", "..", "examples", "retail", "raw", name))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("examples/retail/raw/%s differs from the fixture's (%v): copy internal/retail/fixture/%s there", name, err, name)
		}
	}
}
