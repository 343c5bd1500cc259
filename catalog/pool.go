package catalog

import (
	"database/sql"
	"sync"
	"time"
)

// pools holds the connections of the SQL catalogs on a database server
// (PostgreSQL), one pool a data source for the process. A connection to
// PostgreSQL is a server process forked for it: about 35 ms of the
// server's CPU, measured on the 2-core machine lakeswap is measured on, as
// much as a small publish spends in all. A program that opens the same
// catalog again (a Go program publishing table after table, the tests'
// in-process runs) reuses the connections the last one left. SQLite's
// connections are files opened in this process, cheap; and a connection
// kept open to a file that was replaced would read the old one: they are
// not kept.
var pools struct {
	sync.Mutex
	dbs map[[2]string]*sql.DB
}

// poolIdle is how long an unused connection is kept: long enough for the
// next run of a script or a loop, short enough that a program that opened
// many catalogs does not hold a server connection for each.
const poolIdle = 10 * time.Second

// sharedDB returns the process's pool for a server's data source, opened
// now if it is the first. Its callers never close it.
func sharedDB(driver, uri string) (*sql.DB, error) {
	pools.Lock()
	defer pools.Unlock()
	key := [2]string{driver, uri}
	if db, ok := pools.dbs[key]; ok {
		return db, nil
	}
	db, err := sql.Open(driver, uri)
	if err != nil {
		return nil, err
	}
	db.SetConnMaxIdleTime(poolIdle)
	if pools.dbs == nil {
		pools.dbs = map[[2]string]*sql.DB{}
	}
	pools.dbs[key] = db
	return db, nil
}

// pooled says whether a SQL catalog's connections are kept for the process
// (sharedDB): those of a database server, not SQLite's.
func pooled(driver string) bool { return driver != "" && driver != "sqlite" && driver != "sqlite3" }

// openDB opens a SQL catalog's database: the process's pool of a server,
// or a handle of its own to close (close is then true).
func openDB(driver, uri string) (db *sql.DB, close bool, err error) {
	if pooled(driver) {
		db, err = sharedDB(driver, uri)
		return db, false, err
	}
	db, err = sql.Open(driver, uri)
	return db, true, err
}
