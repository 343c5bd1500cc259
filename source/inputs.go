package source

import (
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/klauspost/compress/zstd"
)

// NoMatchError is an input pattern or folder that names no input file: a
// typo in a glob must not publish fewer files than meant.
type NoMatchError struct {
	Pattern string
	Folder  bool
}

func (e *NoMatchError) Error() string {
	if e.Folder {
		return fmt.Sprintf("input folder %s holds no .csv, .ndjson, .jsonl or .parquet file (optionally .gz or .zst)", e.Pattern)
	}
	return fmt.Sprintf("input pattern %s matches no file", e.Pattern)
}

// ListInputs turns input arguments into the files they name: a file as it
// is, a glob (* ? [) as the files it matches, a folder as the input files
// under it (recursively, skipping names that start with '.' or '_', as
// engines mark their hidden and _SUCCESS files). Each file must have a
// format lakeswap reads. The list is sorted within each argument and holds
// each file once.
//
// A file named twice, in any spelling (a.csv and ./a.csv, a path and a
// link to it), is read once. Only regular files are inputs: a named pipe,
// device or socket is refused before anything is read, since reading one
// may block for ever or never end.
func ListInputs(args []string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	bySize := map[int64][]os.FileInfo{} // for hard links: one file, two names
	for _, arg := range args {
		files, err := listInput(arg)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			if err := regular(f); err != nil {
				return nil, err
			}
			id := identity(f)
			if seen[id] {
				continue
			}
			seen[id] = true
			info, err := os.Stat(f)
			if err != nil {
				return nil, err
			}
			if slices.ContainsFunc(bySize[info.Size()], func(o os.FileInfo) bool { return os.SameFile(o, info) }) {
				continue
			}
			bySize[info.Size()] = append(bySize[info.Size()], info)
			out = append(out, f)
		}
	}
	return out, nil
}

// identity is a file's one spelling: its absolute path with links
// resolved.
func identity(path string) string {
	if p, err := filepath.EvalSymlinks(path); err == nil {
		path = p
	}
	if p, err := filepath.Abs(path); err == nil {
		path = p
	}
	return path
}

// regular refuses an input that is not a regular file.
func regular(path string) error {
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	m := info.Mode()
	if m.IsRegular() {
		return nil
	}
	what := "not a regular file"
	switch {
	case m&fs.ModeNamedPipe != 0:
		what = "a named pipe"
	case m&fs.ModeSocket != 0:
		what = "a socket"
	case m&fs.ModeDevice != 0, m&fs.ModeCharDevice != 0:
		what = "a device"
	case m.IsDir():
		what = "a folder"
	}
	return &NotAFileError{Path: path, What: what}
}

// NotAFileError is an input that is not a regular file (a named pipe, a
// device, a socket): reading one may block for ever or never end.
type NotAFileError struct{ Path, What string }

func (e *NotAFileError) Error() string {
	return fmt.Sprintf("input %s is %s: lakeswap reads regular files, which it can read twice and whose end it knows; write the data to a file first", e.Path, e.What)
}

func listInput(arg string) ([]string, error) {
	if strings.ContainsAny(arg, "*?[") {
		if _, err := os.Stat(arg); err == nil {
			return checkInput(arg) // a file whose name holds a glob character
		}
		matches, err := filepath.Glob(arg)
		if err != nil {
			return nil, fmt.Errorf("input pattern %s: %w", arg, err)
		}
		var files []string
		for _, m := range matches {
			if info, err := os.Stat(m); err == nil && !info.IsDir() {
				if _, err := InputFormat(m); err != nil {
					return nil, fmt.Errorf("input pattern %s matches %s: %w", arg, m, err)
				}
				files = append(files, m)
			}
		}
		if len(files) == 0 {
			return nil, &NoMatchError{Pattern: arg}
		}
		slices.Sort(files)
		return files, nil
	}
	info, err := os.Stat(arg)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("input %s does not exist", arg)
	}
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return checkInput(arg)
	}
	var files []string
	err = filepath.WalkDir(arg, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if p != arg && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		if _, err := InputFormat(p); err != nil {
			// A folder of output is all input; anything else in it (a
			// table's own metadata, say) means the wrong folder.
			return fmt.Errorf("input folder %s holds %s, which lakeswap does not read: name the input files, or a glob", arg, p)
		}
		files = append(files, p)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, &NoMatchError{Pattern: arg, Folder: true}
	}
	slices.Sort(files)
	return files, nil
}

func checkInput(path string) ([]string, error) {
	if _, err := InputFormat(path); err != nil {
		return nil, err
	}
	return []string{path}, nil
}

// InputFormat names the format of an input file by its extension: csv,
// ndjson (.ndjson, .jsonl, .json) or parquet. Text may be compressed
// (.gz, .zst); Parquet compresses inside the file.
func InputFormat(path string) (string, error) {
	name := strings.ToLower(path)
	compressed := compression(name) != ""
	if compressed {
		name = strings.TrimSuffix(name, filepath.Ext(name))
	}
	switch filepath.Ext(name) {
	case ".csv":
		return "csv", nil
	case ".ndjson", ".jsonl", ".json":
		return "ndjson", nil
	case ".parquet":
		if compressed {
			return "", fmt.Errorf("input %s: a Parquet file is compressed inside; name it .parquet", path)
		}
		return "parquet", nil
	}
	return "", fmt.Errorf("input %s: unknown format; name it .csv, .ndjson, .jsonl or .parquet (text may end in .gz or .zst)", path)
}

// compression names how a file's bytes are compressed, by its extension.
func compression(path string) string {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".gz", ".gzip":
		return "gzip"
	case ".zst", ".zstd":
		return "zstd"
	}
	return ""
}

// openText opens a text input, decompressing it as its name says.
func openText(path string) (io.ReadCloser, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open input: %w", err) // the file, not its content: not a refusal
	}
	switch compression(path) {
	case "gzip":
		z, err := gzip.NewReader(f)
		if err != nil {
			f.Close()
			return nil, &InputError{File: path, Err: fmt.Errorf("not gzip data: %w", err)}
		}
		return readCloser{z, func() error { z.Close(); return f.Close() }}, nil
	case "zstd":
		z, err := zstd.NewReader(f, zstd.WithDecoderConcurrency(1))
		if err != nil {
			f.Close()
			return nil, &InputError{File: path, Err: fmt.Errorf("not zstd data: %w", err)}
		}
		return readCloser{z, func() error { z.Close(); return f.Close() }}, nil
	}
	return f, nil
}

type readCloser struct {
	io.Reader
	close func() error
}

func (r readCloser) Close() error { return r.close() }
