// Package layers holds the test that keeps lakeswap's layers apart: the
// packages below the protocol (contract, verify, parquetio, s3store, runrecord, source) never
// reach up into swap, catalog or the command; only tests and dev tooling
// reach testenv; the shipped binary links no test code (testing, testenv).
package layers
