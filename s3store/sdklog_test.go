package s3store_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/aws/smithy-go/logging"

	"github.com/lakeswap/lakeswap/s3store"
)

// TestSDKLogOnlyWhereAsked: the AWS SDK's own lines (a response without a
// checksum, an instance-metadata fallback) go nowhere unless WithSDKLog
// names a log (lakeswap -vv) in the request's context, and there only at
// debug level.
func TestSDKLogOnlyWhereAsked(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test-secret")
	t.Setenv("AWS_REGION", "us-east-1")
	var buf bytes.Buffer
	for _, debug := range []bool{false, true} {
		buf.Reset()
		level := slog.LevelInfo // -v
		if debug {
			level = slog.LevelDebug // -vv
		}
		log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: level}))
		for _, ctx := range []context.Context{context.Background(), s3store.WithSDKLog(context.Background(), log)} {
			cfg, err := s3store.LoadAWS(ctx, s3store.Config{})
			if err != nil {
				t.Fatal(err)
			}
			// As the SDK logs a request's lines: through the logger of the
			// request's context (a configuration is loaded once a process).
			logging.WithContext(ctx, cfg.Logger).Logf(logging.Warn, "Response has no supported checksum. Not validating response payload.")
		}
		if got := strings.Count(buf.String(), "Response has no supported checksum"); got != map[bool]int{false: 0, true: 1}[debug] {
			t.Errorf("debug %v: the SDK's warning was logged %d times: %q", debug, got, buf.String())
		}
	}
}

// TestConfigLoadedOncePerEnvironment: a process loads an AWS configuration
// once (the CA bundle is parsed once), and again when the environment's
// credentials change, so that a configuration never holds stale ones.
func TestConfigLoadedOncePerEnvironment(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "first")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "first-secret")
	t.Setenv("AWS_REGION", "us-east-1")
	ctx := context.Background()
	a, err := s3store.LoadAWS(ctx, s3store.Config{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := s3store.LoadAWS(ctx, s3store.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if a.HTTPClient != b.HTTPClient {
		t.Error("the same environment loaded the configuration twice")
	}
	t.Setenv("AWS_ACCESS_KEY_ID", "second")
	c, err := s3store.LoadAWS(ctx, s3store.Config{})
	if err != nil {
		t.Fatal(err)
	}
	creds, err := c.Credentials.Retrieve(ctx)
	if err != nil || creds.AccessKeyID != "second" {
		t.Errorf("after the environment's key changed, the configuration holds key %q (%v), want second", creds.AccessKeyID, err)
	}
}

// TestSDKLogIsTheRequests: a configuration first loaded by a command with
// a log (-vv) does not log a later request whose context names none: the
// configuration is the process's, the log the command's.
func TestSDKLogIsTheRequests(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test-secret")
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_LAKESWAP_TEST", t.Name()) // a configuration of this test's own
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	cfg, err := s3store.LoadAWS(s3store.WithSDKLog(context.Background(), log), s3store.Config{})
	if err != nil {
		t.Fatal(err)
	}
	logging.WithContext(context.Background(), cfg.Logger).Logf(logging.Warn, "Response has no supported checksum. Not validating response payload.")
	if buf.Len() > 0 {
		t.Errorf("a request with no log in its context logged to the log of the command that loaded the configuration: %q", buf.String())
	}
}
