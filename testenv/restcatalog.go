package testenv

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/apache/iceberg-go"
	icebergcat "github.com/apache/iceberg-go/catalog"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	"github.com/apache/iceberg-go/table"
	_ "modernc.org/sqlite" // the SQL catalog behind the server

	"github.com/lakeswap/lakeswap/catalog"
)

// REST is an Iceberg REST catalog server for tests: the REST OpenAPI
// spec's config, namespace and table routes (create, load, commit with
// requirements, drop) on a loopback port, over iceberg-go's SQL catalog on
// SQLite, the table files wherever its warehouse says (a MinIO bucket).
// A failed requirement is answered 409 CommitFailedException, as the spec
// says; queued faults answer a commit with any status, before it is applied
// or after, as a server or gateway that timed out would.
type REST struct {
	URL    string
	cat    icebergcat.Catalog
	props  iceberg.Properties
	mu     sync.Mutex
	faults []CommitFault
	log    []string
}

// CommitFault is how the server answers one commit: with Status, after
// applying it when Applied (a 504 from a gateway whose server went on), or
// without applying it.
type CommitFault struct {
	Status  int
	Applied bool
}

// NewREST starts a REST catalog until the test ends. props are the SQL
// catalog's (warehouse, s3.endpoint, s3.region, credentials); its SQLite
// file is the test's.
func NewREST(t testing.TB, props map[string]string) *REST {
	t.Helper()
	p := iceberg.Properties{
		"type": "sql", "sql.driver": "sqlite", "sql.dialect": "sqlite",
		"uri": "file:" + filepath.Join(t.TempDir(), "rest.db") + "?_pragma=busy_timeout(10000)",
	}
	for k, v := range props {
		p[k] = v
	}
	cat, err := icebergcat.Load(context.Background(), "rest-backend", p)
	if err != nil {
		t.Fatalf("REST catalog's SQL catalog: %v", err)
	}
	s := &REST{cat: cat, props: p}
	srv := httptest.NewServer(s.routes())
	t.Cleanup(func() {
		srv.Close()
		if c, ok := cat.(*sqlcat.Catalog); ok {
			_ = c.Close()
		}
	})
	s.URL = srv.URL
	return s
}

// FailCommits queues faults for the next commits, one commit each.
func (s *REST) FailCommits(faults ...CommitFault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, faults...)
}

// Injected lists the faults answered so far, as "504 applied ns.table".
func (s *REST) Injected() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.log...)
}

func (s *REST) nextFault(ident table.Identifier) (CommitFault, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.faults) == 0 {
		return CommitFault{}, false
	}
	f := s.faults[0]
	s.faults = s.faults[1:]
	return f, true
}

// injected logs a fault as answered: to a commit applied or not.
func (s *REST) injected(f CommitFault, applied bool, ident table.Identifier) {
	s.mu.Lock()
	defer s.mu.Unlock()
	state := "not applied"
	if applied {
		state = "applied"
	}
	s.log = append(s.log, fmt.Sprintf("%d %s %s", f.Status, state, strings.Join(ident, ".")))
}

func (s *REST) routes() http.Handler {
	m := http.NewServeMux()
	m.HandleFunc("GET /v1/config", func(w http.ResponseWriter, r *http.Request) {
		reply(w, http.StatusOK, map[string]any{"defaults": map[string]string{}, "overrides": map[string]string{}})
	})
	m.HandleFunc("GET /v1/namespaces", s.listNamespaces)
	m.HandleFunc("POST /v1/namespaces", s.createNamespace)
	m.HandleFunc("GET /v1/namespaces/{ns}", s.loadNamespace)
	m.HandleFunc("HEAD /v1/namespaces/{ns}", s.loadNamespace)
	m.HandleFunc("DELETE /v1/namespaces/{ns}", s.dropNamespace)
	m.HandleFunc("GET /v1/namespaces/{ns}/tables", s.listTables)
	m.HandleFunc("POST /v1/namespaces/{ns}/tables", s.createTable)
	m.HandleFunc("GET /v1/namespaces/{ns}/tables/{table}", s.loadTable)
	m.HandleFunc("HEAD /v1/namespaces/{ns}/tables/{table}", s.loadTable)
	m.HandleFunc("POST /v1/namespaces/{ns}/tables/{table}", s.commitTable)
	m.HandleFunc("DELETE /v1/namespaces/{ns}/tables/{table}", s.dropTable)
	m.HandleFunc("POST /v1/transactions/commit", s.commitTransaction)
	return m
}

// namespace is a path's namespace: levels joined by the unit separator.
func namespace(r *http.Request) table.Identifier {
	return strings.Split(r.PathValue("ns"), "\x1f")
}

func ident(r *http.Request) table.Identifier {
	return append(namespace(r), r.PathValue("table"))
}

func (s *REST) listNamespaces(w http.ResponseWriter, r *http.Request) {
	var parent table.Identifier
	if p := r.URL.Query().Get("parent"); p != "" {
		parent = strings.Split(p, "\x1f")
	}
	nss, err := s.cat.ListNamespaces(r.Context(), parent)
	if err != nil {
		fail(w, err)
		return
	}
	out := make([][]string, 0, len(nss))
	for _, ns := range nss {
		out = append(out, ns)
	}
	reply(w, http.StatusOK, map[string]any{"namespaces": out})
}

func (s *REST) createNamespace(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Namespace  []string           `json:"namespace"`
		Properties iceberg.Properties `json:"properties"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		failWith(w, http.StatusBadRequest, "BadRequestException", err)
		return
	}
	if err := s.cat.CreateNamespace(r.Context(), req.Namespace, req.Properties); err != nil {
		fail(w, err)
		return
	}
	if req.Properties == nil {
		req.Properties = iceberg.Properties{}
	}
	reply(w, http.StatusOK, map[string]any{"namespace": req.Namespace, "properties": req.Properties})
}

func (s *REST) loadNamespace(w http.ResponseWriter, r *http.Request) {
	props, err := s.cat.LoadNamespaceProperties(r.Context(), namespace(r))
	if err != nil {
		fail(w, err)
		return
	}
	if r.Method == http.MethodHead {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	reply(w, http.StatusOK, map[string]any{"namespace": namespace(r), "properties": props})
}

func (s *REST) dropNamespace(w http.ResponseWriter, r *http.Request) {
	if err := s.cat.DropNamespace(r.Context(), namespace(r)); err != nil {
		fail(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *REST) listTables(w http.ResponseWriter, r *http.Request) {
	type id struct {
		Namespace []string `json:"namespace"`
		Name      string   `json:"name"`
	}
	out := []id{}
	for ident, err := range s.cat.ListTables(r.Context(), namespace(r)) {
		if err != nil {
			fail(w, err)
			return
		}
		out = append(out, id{Namespace: ident[:len(ident)-1], Name: ident[len(ident)-1]})
	}
	reply(w, http.StatusOK, map[string]any{"identifiers": out})
}

func (s *REST) createTable(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Name          string                 `json:"name"`
		Schema        *iceberg.Schema        `json:"schema"`
		Location      string                 `json:"location"`
		PartitionSpec *iceberg.PartitionSpec `json:"partition-spec"`
		WriteOrder    *table.SortOrder       `json:"write-order"`
		StageCreate   bool                   `json:"stage-create"`
		Properties    iceberg.Properties     `json:"properties"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Schema == nil {
		failWith(w, http.StatusBadRequest, "BadRequestException", fmt.Errorf("create table: want name and schema (%v)", err))
		return
	}
	if req.StageCreate {
		failWith(w, http.StatusNotImplemented, "NotImplementedException", errors.New("staged create is not served here"))
		return
	}
	var opts []icebergcat.CreateTableOpt
	if req.Location != "" {
		opts = append(opts, icebergcat.WithLocation(req.Location))
	}
	if req.PartitionSpec != nil {
		opts = append(opts, icebergcat.WithPartitionSpec(req.PartitionSpec))
	}
	if req.WriteOrder != nil {
		opts = append(opts, icebergcat.WithSortOrder(*req.WriteOrder))
	}
	if req.Properties != nil {
		opts = append(opts, icebergcat.WithProperties(req.Properties))
	}
	tbl, err := s.cat.CreateTable(r.Context(), append(namespace(r), req.Name), req.Schema, opts...)
	if err != nil {
		fail(w, err)
		return
	}
	replyTable(w, tbl.MetadataLocation(), tbl.Metadata())
}

func (s *REST) loadTable(w http.ResponseWriter, r *http.Request) {
	tbl, err := s.cat.LoadTable(r.Context(), ident(r))
	if err != nil {
		fail(w, err)
		return
	}
	if r.Method == http.MethodHead {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	replyTable(w, tbl.MetadataLocation(), tbl.Metadata())
}

// commitTable applies a commit's updates when its requirements hold, as
// one change of the table's metadata location.
func (s *REST) commitTable(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Requirements table.Requirements `json:"requirements"`
		Updates      table.Updates      `json:"updates"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		failWith(w, http.StatusBadRequest, "BadRequestException", err)
		return
	}
	id := ident(r)
	fault, faulty := s.nextFault(id)
	if faulty && !fault.Applied {
		s.injected(fault, false, id)
		failWith(w, fault.Status, "ServiceFailureException", fmt.Errorf("injected %d: the commit was not applied", fault.Status))
		return
	}
	meta, loc, err := s.cat.CommitTable(r.Context(), id, req.Requirements, req.Updates)
	switch {
	case err != nil && strings.HasPrefix(strings.ToLower(err.Error()), "requirement failed"), errors.Is(err, table.ErrCommitFailed):
		failWith(w, http.StatusConflict, "CommitFailedException", err)
	case err != nil:
		fail(w, err)
	case faulty:
		s.injected(fault, true, id)
		failWith(w, fault.Status, "ServiceFailureException", fmt.Errorf("injected %d after the commit was applied", fault.Status))
	default:
		replyTable(w, loc, meta)
	}
}

// commitTransaction applies the changes of several tables as one, every
// table's requirements holding or none applied, through the SQL catalog's
// one database transaction; a fault answers it as it answers a commit.
func (s *REST) commitTransaction(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Changes []struct {
			Identifier struct {
				Namespace []string `json:"namespace"`
				Name      string   `json:"name"`
			} `json:"identifier"`
			Requirements table.Requirements `json:"requirements"`
			Updates      table.Updates      `json:"updates"`
		} `json:"table-changes"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		failWith(w, http.StatusBadRequest, "BadRequestException", err)
		return
	}
	var commits []table.TableCommit
	for _, c := range req.Changes {
		commits = append(commits, table.TableCommit{Identifier: append(slices.Clone(c.Identifier.Namespace), c.Identifier.Name),
			Requirements: c.Requirements, Updates: c.Updates})
	}
	if len(commits) == 0 {
		failWith(w, http.StatusBadRequest, "BadRequestException", errors.New("no table changes"))
		return
	}
	id := commits[0].Identifier
	fault, faulty := s.nextFault(id)
	if faulty && !fault.Applied {
		s.injected(fault, false, id)
		failWith(w, fault.Status, "ServiceFailureException", fmt.Errorf("injected %d: the transaction was not applied", fault.Status))
		return
	}
	props := map[string]string{}
	for k, v := range s.props {
		props[k] = v
	}
	err := catalog.CommitSQLTables(r.Context(), s.cat, "rest-backend", props, commits)
	switch {
	case err != nil && (strings.HasPrefix(strings.ToLower(err.Error()), "requirement failed") || errors.Is(err, table.ErrCommitFailed)):
		failWith(w, http.StatusConflict, "CommitFailedException", err)
	case err != nil:
		fail(w, err)
	case faulty:
		s.injected(fault, true, id)
		failWith(w, fault.Status, "ServiceFailureException", fmt.Errorf("injected %d after the transaction was applied", fault.Status))
	default:
		w.WriteHeader(http.StatusNoContent)
	}
}

func (s *REST) dropTable(w http.ResponseWriter, r *http.Request) {
	if err := s.cat.DropTable(r.Context(), ident(r)); err != nil {
		fail(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func replyTable(w http.ResponseWriter, loc string, meta table.Metadata) {
	reply(w, http.StatusOK, map[string]any{"metadata-location": loc, "metadata": meta, "config": map[string]string{}})
}

func reply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// fail answers the catalog's error with the spec's status and type.
func fail(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, icebergcat.ErrNoSuchTable):
		failWith(w, http.StatusNotFound, "NoSuchTableException", err)
	case errors.Is(err, icebergcat.ErrNoSuchNamespace):
		failWith(w, http.StatusNotFound, "NoSuchNamespaceException", err)
	case errors.Is(err, icebergcat.ErrTableAlreadyExists), errors.Is(err, icebergcat.ErrNamespaceAlreadyExists):
		failWith(w, http.StatusConflict, "AlreadyExistsException", err)
	case errors.Is(err, icebergcat.ErrNamespaceNotEmpty):
		failWith(w, http.StatusConflict, "NamespaceNotEmptyException", err)
	default:
		failWith(w, http.StatusInternalServerError, "ServiceFailureException", err)
	}
}

func failWith(w http.ResponseWriter, status int, typ string, err error) {
	reply(w, status, map[string]any{"error": map[string]any{"message": err.Error(), "type": typ, "code": status}})
}
