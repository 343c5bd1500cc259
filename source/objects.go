package source

import (
	"context"
	"fmt"
	"io"
	"os"
	"path"
	"strings"

	"github.com/lakeswap/lakeswap/runrecord"
)

// Object is an input object in an object store, as listed: what a run
// read, recorded with it.
type Object = runrecord.Input

// ObjectStore lists and reads input objects (lakeswap's S3 store).
type ObjectStore interface {
	List(ctx context.Context, bucket, prefix string, fn func(key string, size int64, etag string) error) error
	// Download copies an object to w only if it is still as listed.
	Download(ctx context.Context, bucket, key, etag string, size int64, w io.Writer) error
}

// IsObjectURL reports whether an input names objects in S3.
func IsObjectURL(s string) bool {
	return strings.HasPrefix(s, "s3://") || strings.HasPrefix(s, "s3a://")
}

// ListObjects lists the input objects an s3:// argument names, as
// ListInputs does for local files: an object, a glob over keys ('*' and '?'
// stay within one '/'-separated segment), or a prefix ending in '/' (every
// input object under it, skipping names that start with '.' or '_').
// Only the objects listed here are read, so an object written under the
// prefix later is not part of the run.
func ListObjects(ctx context.Context, store ObjectStore, arg string) ([]Object, error) {
	rest := strings.TrimPrefix(strings.TrimPrefix(arg, "s3://"), "s3a://")
	bucket, key, _ := strings.Cut(rest, "/")
	if bucket == "" {
		return nil, fmt.Errorf("input %s: name a bucket, s3://BUCKET/KEY", arg)
	}
	if strings.Contains(key, "**") {
		return nil, fmt.Errorf("input %s: '**' is not a pattern lakeswap reads ('*' stays within one '/' segment); name a prefix ending in '/' to read every object under it", arg)
	}
	glob := strings.IndexAny(key, "*?[")
	if _, err := path.Match(key, ""); err != nil {
		return nil, fmt.Errorf("input %s: %w", arg, err)
	}
	prefix := key
	if glob >= 0 {
		prefix = key[:glob]
	}
	var out []Object
	err := store.List(ctx, bucket, prefix, func(k string, size int64, etag string) error {
		url := "s3://" + bucket + "/" + k
		switch {
		case glob >= 0:
			if ok, _ := path.Match(key, k); !ok || hidden(k[len(prefix):]) {
				return nil
			}
		case k == key:
		case strings.HasSuffix(key, "/") || key == "":
			if hidden(k[len(key):]) || strings.HasSuffix(k, "/") {
				return nil
			}
		default:
			return nil // another object that merely starts with key
		}
		if _, err := InputFormat(k); err != nil {
			if glob < 0 && k != key {
				return fmt.Errorf("input prefix %s holds %s, which lakeswap does not read: name the input objects, or a glob", arg, url)
			}
			return fmt.Errorf("input %s: %w", url, err)
		}
		out = append(out, Object{URL: url, Size: size, ETag: etag})
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		if glob < 0 && !strings.HasSuffix(key, "/") {
			return nil, fmt.Errorf("input %s does not exist (a prefix ends in '/')", arg)
		}
		return nil, &NoMatchError{Pattern: arg, Folder: glob < 0}
	}
	return out, nil
}

// hidden reports whether a key below a prefix has a segment that starts
// with '.' or '_', as engines name their hidden and _SUCCESS objects.
func hidden(rel string) bool {
	for _, seg := range strings.Split(rel, "/") {
		if strings.HasPrefix(seg, ".") || strings.HasPrefix(seg, "_") {
			return true
		}
	}
	return false
}

// download copies an object into dir, under a name that keeps its format's
// extension, and returns the local path.
func download(ctx context.Context, store ObjectStore, o Object, dir string, n int) (string, error) {
	rest := strings.TrimPrefix(strings.TrimPrefix(o.URL, "s3://"), "s3a://")
	bucket, key, _ := strings.Cut(rest, "/")
	// A name of safe bytes: the engine reads *, ?, [ and { as a pattern.
	safe := strings.Map(func(r rune) rune {
		if strings.ContainsRune("*?[]{}\\'\"", r) {
			return '_'
		}
		return r
	}, path.Base(key))
	local := fmt.Sprintf("%s/object-%d-%s", dir, n, safe)
	f, err := os.OpenFile(local, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return "", fmt.Errorf("copy %s to local disk: %w", o.URL, err)
	}
	err = store.Download(ctx, bucket, key, o.ETag, o.Size, f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(local)
		return "", err
	}
	return local, nil
}

// Fetch copies a listed object to dir as it arrives, only if it is still
// as listed (its ETag; a data file of a table, which is never rewritten,
// by its size), and returns the copy's path; n keeps copies of objects of
// one name apart.
func Fetch(ctx context.Context, store ObjectStore, o Object, dir string, n int) (string, error) {
	return download(ctx, store, o, dir, n)
}
