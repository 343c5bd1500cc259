// Package catalog opens the Iceberg catalog lakeswap publishes through and
// creates tables with their lakeswap contract.
//
// Which catalog: flag > environment > config file > default. The file is
// lakeswap.yaml (or iceberg-go's ~/.iceberg-go.yaml), with the property names
// iceberg-go and PyIceberg users already have (type, uri, warehouse,
// s3.endpoint, ...). With nothing configured the catalog is embedded:
// iceberg-go's SQL catalog on SQLite in <home>/catalog.db with a warehouse of
// local files in <home>/warehouse.
//
//	cfg, _ := catalog.Resolve(catalog.Settings{Home: ".lakeswap"})
//	cat, _ := catalog.Open(ctx, cfg)
//	tbl, _ := cat.LoadTable(ctx, table.Identifier{"retail", "daily_orders"})
package catalog
