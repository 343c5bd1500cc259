// Package contract is what a table promises about every partition lakeswap
// publishes to it, read once from the table's metadata: the columns, the
// grain (unique, never null), the additive columns whose sums are recorded,
// the column checks, the one partition field and its transform, and the
// typed partition values and selector syntax that name partitions. Every
// lakeswap.* table property is named here.
//
//	c, err := contract.Of(tbl.Metadata())
//	values, err := c.Partition.ParseSelector("order_date=2026-01-01..2026-01-31")
package contract
