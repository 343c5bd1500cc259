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
// names a log (lakeswap -vv), and there only at debug level.
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
			cfg.Logger.Logf(logging.Warn, "Response has no supported checksum. Not validating response payload.")
		}
		if got := strings.Count(buf.String(), "Response has no supported checksum"); got != map[bool]int{false: 0, true: 1}[debug] {
			t.Errorf("debug %v: the SDK's warning was logged %d times: %q", debug, got, buf.String())
		}
	}
}
