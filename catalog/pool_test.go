package catalog_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/lakeswap/lakeswap/catalog"
	"github.com/lakeswap/lakeswap/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Run(m)) }

// countingProxy forwards TCP connections to target and counts them.
func countingProxy(t *testing.T, target string) (addr string, opened *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	opened = new(atomic.Int64)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			opened.Add(1)
			s, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			go func() { io.Copy(s, c); s.Close() }()
			go func() { io.Copy(c, s); c.Close() }()
		}
	}()
	return ln.Addr().String(), opened
}

// TestServerConnectionsKept: a program that opens a PostgreSQL catalog
// again and again (runs one after another in one process) connects once,
// not once an open: each connection is a server process forked for it.
func TestServerConnectionsKept(t *testing.T) {
	pg := testenv.Postgres(t)
	dsn := pg.NewDatabase(t)
	server := fmt.Sprintf("%s:%d", pg.Host, pg.Port)
	addr, opened := countingProxy(t, server)
	cfg := catalog.Config{Name: "kept", Props: map[string]string{
		"type": "sql", "sql.driver": "pgx", "sql.dialect": "postgres",
		"uri": strings.Replace(dsn, server, addr, 1), "warehouse": "file://" + filepath.Join(t.TempDir(), "warehouse"),
	}}
	ctx := context.Background()
	for i := range 10 {
		cat, err := catalog.Open(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := cat.CreateNamespace(ctx, []string{fmt.Sprintf("ns%d", i)}, nil); err != nil {
			t.Fatal(err)
		}
		if err := cat.Close(); err != nil {
			t.Fatal(err)
		}
	}
	cat, err := catalog.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	nss, err := cat.ListNamespaces(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(nss); n != 10 {
		t.Errorf("%d namespaces, want the 10 created: %v", n, nss)
	}
	if got := opened.Load(); got > 2 {
		t.Errorf("11 opens of the catalog made %d connections to the server, want the first's kept (at most 2)", got)
	}
}
