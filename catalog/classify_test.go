package catalog

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	icebergcat "github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"
	"github.com/aws/aws-sdk-go-v2/aws"
	gluetypes "github.com/aws/aws-sdk-go-v2/service/glue/types"
	"github.com/aws/smithy-go"
	"github.com/beltran/gohive/hive_metastore"
)

// TestCommitErrorsClassified: every catalog's way of refusing a commit it
// did not apply is a conflict, and every other error an unknown outcome,
// from the errors each client gives. REST's come from iceberg-go's client
// answered by a server; Glue's and Hive's are built from the AWS SDK's and
// gohive's types, wrapped as iceberg-go wraps them (README says which
// catalogs ran end to end).
func TestCommitErrorsClassified(t *testing.T) {
	cases := []struct {
		name     string
		err      error
		conflict bool
	}{
		{"rest 409", restCommit(t, http.StatusConflict, "CommitFailedException"), true},
		{"rest 500", restCommit(t, http.StatusInternalServerError, "ServiceFailureException"), false},
		{"rest 504", restCommit(t, http.StatusGatewayTimeout, "ServiceFailureException"), false},
		{"rest 503", restCommit(t, http.StatusServiceUnavailable, "ServiceUnavailableException"), false},
		{"rest 400", restCommit(t, http.StatusBadRequest, "BadRequestException"), false},
		{"glue version mismatch", fmt.Errorf("%w: %w", table.ErrCommitFailed, glueError(&gluetypes.ConcurrentModificationException{Message: aws.String("Update table failed due to concurrent modifications")})), true},
		{"glue version mismatch, unwrapped", glueError(&gluetypes.ConcurrentModificationException{Message: aws.String("Update table failed due to concurrent modifications")}), true},
		{"glue throttled", glueError(&gluetypes.OperationTimeoutException{Message: aws.String("timed out")}), false},
		{"glue internal", glueError(&gluetypes.InternalServiceException{Message: aws.String("internal")}), false},
		{"hive lock not acquired", fmt.Errorf("%w: failed to acquire lock for retail.daily_orders: %w", table.ErrCommitFailed, errors.New("lock state WAITING")), true},
		{"hive alter failed", fmt.Errorf("failed to commit table retail.daily_orders: %w", &hive_metastore.MetaException{Message: "connection reset"}), false},
		{"requirement failed", errors.New("requirement failed: branch main has changed: expected id 1, found 2"), true},
		{"requirement failed, capitalised", errors.New("Requirement failed: current schema id has changed"), true},
		{"network", errors.New("dial tcp 127.0.0.1:1: connect: connection refused"), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cat := Wrap(answering{err: c.err}, Config{Name: "test"})
			_, _, err := cat.CommitTable(context.Background(), table.Identifier{"retail", "daily_orders"}, nil, nil)
			if got := errors.Is(err, ErrConflict); got != c.conflict {
				t.Fatalf("%v: conflict %v, want %v", err, got, c.conflict)
			}
			if !strings.Contains(err.Error(), c.err.Error()) {
				t.Errorf("the catalog's own error is lost: %v", err)
			}
		})
	}
}

// answering is a catalog whose every commit fails with err.
type answering struct {
	icebergcat.Catalog
	err error
}

func (a answering) CommitTable(context.Context, table.Identifier, []table.Requirement, []table.Update) (table.Metadata, string, error) {
	return nil, "", a.err
}

// restCommit is the error iceberg-go's REST client gives for a commit a
// server answers with status.
func restCommit(t *testing.T, status int, typ string) error {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/v1/config" {
			fmt.Fprint(w, `{"defaults":{},"overrides":{}}`)
			return
		}
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"error":{"message":"answered %d","type":%q,"code":%d}}`, status, typ, status)
	}))
	defer srv.Close()
	cat, err := rest.NewCatalog(context.Background(), "test", srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = cat.CommitTable(context.Background(), table.Identifier{"retail", "daily_orders"}, nil, nil)
	if err == nil {
		t.Fatalf("a commit answered %d succeeded", status)
	}
	return err
}

// glueError is err as the AWS SDK returns it from UpdateTable.
func glueError(err error) error {
	return &smithy.OperationError{ServiceID: "Glue", OperationName: "UpdateTable", Err: err}
}
