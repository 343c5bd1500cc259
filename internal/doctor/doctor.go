package doctor

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/lakeswap/lakeswap/catalog"
	"github.com/lakeswap/lakeswap/internal/words"
	"github.com/lakeswap/lakeswap/s3store"
	"github.com/lakeswap/lakeswap/source"
)

// Report is what doctor found: where the catalog comes from, and each
// check's verdict.
type Report struct {
	Catalog      string  `json:"catalog"`
	Type         string  `json:"type"`
	ConfiguredBy string  `json:"configured_by"`
	URI          string  `json:"uri,omitempty"` // secrets masked
	Warehouse    string  `json:"warehouse,omitempty"`
	Credentials  string  `json:"credentials,omitempty"` // the AWS chain's provider, never a secret
	Checks       []Check `json:"checks"`
	OK           bool    `json:"ok"`
}

// Check is one check's verdict, and the fix when it failed.
type Check struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"`
	// Skipped says the check could not be made here, and why (Detail);
	// it fails nothing, and passes nothing either.
	Skipped bool `json:"skipped,omitempty"`
}

// maxSkew is the clock difference against the store past which doctor
// fails: S3 refuses requests signed more than 15 minutes off, and holds and
// grace periods are judged by the store's times.
const maxSkew = 2 * time.Minute

// Run checks the catalog cfg resolves to.
func Run(ctx context.Context, cfg catalog.Config) *Report {
	r := &Report{Catalog: cfg.Name, Type: cfg.Props["type"], ConfiguredBy: cfg.Source, URI: Mask(cfg.Props["uri"]), Warehouse: cfg.Props["warehouse"]}
	if cfg.Embedded {
		r.ConfiguredBy = "no configuration, so the embedded catalog in " + cfg.Home
	}
	if cfg.Missing() {
		// doctor looks; it does not make the catalog it looks for.
		r.add(Check{Name: "catalog present", Detail: catalog.NoCatalog(cfg).Error(),
			Fix: "run `lakeswap table create --schema FILE` here, or name your catalog with --catalog, --config or --home"})
		return r
	}
	var store *s3store.Store
	if s3store.UsesS3(cfg.Props) {
		c := s3store.ConfigFromProps(cfg.Props)
		awsCfg, err := s3store.LoadAWS(ctx, c)
		if err != nil {
			r.add(Check{Name: "credentials", Detail: err.Error(), Fix: "export AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE"})
		} else {
			if creds, err := awsCfg.Credentials.Retrieve(ctx); err == nil {
				r.Credentials = creds.Source
			}
			r.add(Check{Name: "credentials", OK: true, Detail: "from the AWS chain: " + r.Credentials})
			store = s3store.New(awsCfg, c)
		}
	}
	r.add(reachable(ctx, cfg))
	r.add(probe(ctx, cfg, store))
	if source.Engine == "duckdb" {
		r.add(Check{Name: "SQL engine", OK: true, Detail: "embedded DuckDB: --job and CSV inputs run"})
	} else {
		r.add(Check{Name: "SQL engine", Detail: "this build has no SQL engine: --job fails and CSV is read more slowly",
			Fix: "build lakeswap without -tags noduckdb (go install and make build include DuckDB)"})
	}
	r.OK = true
	for _, c := range r.Checks {
		r.OK = r.OK && (c.OK || c.Skipped)
	}
	return r
}

func (r *Report) add(c Check) { r.Checks = append(r.Checks, c) }

// reachable opens the catalog and lists its namespaces.
func reachable(ctx context.Context, cfg catalog.Config) Check {
	c := Check{Name: "catalog reachable"}
	cat, err := catalog.Open(ctx, cfg)
	if err != nil {
		c.Detail, c.Fix = err.Error(), "check the catalog's uri, and that its server is up"
		return c
	}
	defer cat.Close()
	ns, err := cat.ListNamespaces(ctx, nil)
	if err != nil {
		c.Detail, c.Fix = "listing namespaces failed: "+err.Error(), "check the catalog's uri, credentials and that its server is up"
		return c
	}
	c.OK, c.Detail = true, words.Count(len(ns), "namespace")
	return c
}

// probe writes an object under the warehouse, reads it back and removes
// it, and on S3 compares the store's clock with this machine's.
func probe(ctx context.Context, cfg catalog.Config, store *s3store.Store) Check {
	c := Check{Name: "warehouse writable"}
	wh := cfg.Props["warehouse"]
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "lakeswap/doctor/probe-" + hex.EncodeToString(b[:])
	want := []byte("lakeswap doctor probe " + time.Now().UTC().Format(time.RFC3339) + "\n")
	switch {
	case !strings.Contains(wh, "://") && !filepath.IsAbs(wh) && cfg.Props["type"] != "sql":
		// A REST catalog's warehouse is its name for one (analytics), not
		// a location: the catalog places each table's files.
		c.Skipped = true
		c.Detail = fmt.Sprintf("not probed: warehouse %q is not a location; the catalog places each table's files", wh)
		return c
	case store != nil:
		return probeS3(ctx, store, wh, name, want)
	case s3store.UsesS3(cfg.Props):
		c.Detail, c.Fix = "not tried: no credentials for S3", "set credentials (see above), then run doctor again"
		return c
	case strings.HasPrefix(wh, "file://") || !strings.Contains(wh, "://"):
		path := filepath.Join(strings.TrimPrefix(wh, "file://"), name)
		err := os.MkdirAll(filepath.Dir(path), 0o755)
		if err == nil {
			err = os.WriteFile(path, want, 0o644)
		}
		var got []byte
		if err == nil {
			got, err = os.ReadFile(path)
		}
		os.Remove(path)
		os.Remove(filepath.Dir(path))
		os.Remove(filepath.Dir(filepath.Dir(path)))
		if err != nil || !bytes.Equal(got, want) {
			c.Detail, c.Fix = fmt.Sprintf("probe %s: %v", path, err), "make the warehouse folder writable"
			return c
		}
		c.OK, c.Detail = true, "probe written, read back and removed under "+wh
		return c
	}
	c.Detail, c.Fix = "lakeswap cannot probe a warehouse at "+wh, "use an s3:// or local warehouse"
	return c
}

func probeS3(ctx context.Context, store *s3store.Store, wh, name string, want []byte) Check {
	c := Check{Name: "warehouse writable"}
	u, err := url.Parse(wh)
	if err != nil || u.Host == "" {
		c.Detail, c.Fix = "warehouse "+wh+" is not s3://bucket/prefix", "set warehouse to s3://bucket/prefix"
		return c
	}
	bucket, key := u.Host, strings.Trim(strings.TrimPrefix(u.Path, "/")+"/"+name, "/")
	before := time.Now()
	_, err = store.Client().PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader(want)})
	after := time.Now()
	if err != nil {
		c.Detail, c.Fix = fmt.Sprintf("write s3://%s/%s: %v", bucket, key, err), "check the bucket exists, the endpoint, and that the credentials may write there"
		return c
	}
	defer store.Delete(context.WithoutCancel(ctx), bucket, key)
	out, err := store.Client().GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		c.Detail, c.Fix = fmt.Sprintf("read s3://%s/%s back: %v", bucket, key, err), "check that the credentials may read the bucket"
		return c
	}
	got, err := io.ReadAll(out.Body)
	out.Body.Close()
	if err != nil || !bytes.Equal(got, want) {
		c.Detail, c.Fix = fmt.Sprintf("s3://%s/%s read back other bytes (%v)", bucket, key, err), "check the endpoint: it does not return what was written"
		return c
	}
	if err := store.Delete(ctx, bucket, key); err != nil {
		c.Detail, c.Fix = fmt.Sprintf("remove s3://%s/%s: %v", bucket, key, err), "lakeswap removes what it staged: the credentials must be allowed to delete"
		return c
	}
	c.OK, c.Detail = true, "probe written, read back and removed under "+wh
	if out.LastModified != nil {
		// The store's time of the write, against this machine's, to the
		// second the store keeps.
		mid := before.Add(after.Sub(before) / 2)
		if skew := out.LastModified.Sub(mid.Truncate(time.Second)); skew > maxSkew || skew < -maxSkew {
			c.OK = false
			c.Detail = fmt.Sprintf("this machine's clock is %s off the store's", skew.Round(time.Second))
			c.Fix = "sync the clock (NTP): S3 refuses requests signed 15 minutes off, and gc judges ages by the store's times"
		} else {
			c.Detail += fmt.Sprintf("; clock within %s of the store's", maxSkew)
		}
	}
	return c
}

var userinfo = regexp.MustCompile(`(?i)(password|secret|token)=([^&\s]+)`)

// Mask hides the secrets of a URI: the password of its user, and any
// password, secret or token parameter.
func Mask(uri string) string {
	if u, err := url.Parse(uri); err == nil && u.User != nil {
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
			uri = u.String()
		}
	}
	return userinfo.ReplaceAllString(uri, "${1}=xxxxx")
}
