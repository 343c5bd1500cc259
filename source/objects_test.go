package source

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
)

// fakeStore lists keys of one bucket, in order.
type fakeStore []string

func (s fakeStore) List(_ context.Context, bucket, prefix string, fn func(string, int64, string) error) error {
	for _, k := range s {
		if strings.HasPrefix(k, prefix) {
			if err := fn(k, 1, `"etag"`); err != nil {
				return err
			}
		}
	}
	return nil
}

func (fakeStore) Download(context.Context, string, string, string, int64, io.Writer) error {
	return errors.New("not here")
}

func TestListObjects(t *testing.T) {
	store := fakeStore{"a/_SUCCESS", "a/day-1.csv", "a/day-2.csv.gz", "a/sub/day-3.parquet", "a/.hidden.csv", "a/_tmp/x.csv", "ab/other.csv", "c/notes.txt", "c/x.csv"}
	for arg, want := range map[string]string{
		"s3://b/a/*.csv":      "s3://b/a/day-1.csv",
		"s3://b/a/day-?.csv*": "s3://b/a/day-1.csv s3://b/a/day-2.csv.gz",
		"s3://b/a/":           "s3://b/a/day-1.csv s3://b/a/day-2.csv.gz s3://b/a/sub/day-3.parquet",
		"s3://b/a/day-1.csv":  "s3://b/a/day-1.csv",
		"s3://b/a":            "error: does not exist",
		"s3://b/a/**":         "error: '**' is not a pattern",
		"s3://b/a/[x":         "error: syntax error in pattern",
		"s3://b/c/":           "error: which lakeswap does not read",
		"s3://b/z/":           "error: holds no",
		"s3://b/a/*.json":     "error: matches no file",
		"s3:///a.csv":         "error: name a bucket",
	} {
		objs, err := ListObjects(context.Background(), store, arg)
		var got []string
		for _, o := range objs {
			got = append(got, o.URL)
		}
		g := strings.Join(got, " ")
		if err != nil {
			g = "error: " + err.Error()
		}
		if !strings.HasPrefix(want, "error: ") && g != want || strings.HasPrefix(want, "error: ") && !strings.Contains(g, strings.TrimPrefix(want, "error: ")) {
			t.Errorf("ListObjects(%s) = %s, want %s", arg, g, want)
		}
	}
}
