// Package retail is the retail-orders reference scenario, for tests and the
// demo: raw order events with every backfill hazard, and the daily groups a
// correct backfill produces after each batch. The fixture files are copied
// unchanged from the project's shared fixtures (fixtures/retail-orders); see
// fixture/README.md.
//
//	groups, _ := retail.Daily(retail.AfterBatch2)
//	src := retail.NewSource(groups)
package retail
