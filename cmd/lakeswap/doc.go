// Command lakeswap publishes historical backfills to Apache Iceberg tables so
// that a run is safe to repeat and safe to undo: each run replaces exactly
// the partitions it declares, in one snapshot, verified after the commit.
//
//	lakeswap table create --schema daily_orders.yaml
//	lakeswap publish --table retail.daily_orders --partitions order_date=2026-01-01..2026-01-31 out/*.parquet
//	lakeswap history --table retail.daily_orders
//	lakeswap rollback --table retail.daily_orders --run RUN_ID
//	lakeswap demo
package main
