// Package demo tells the retail-orders backfill story on a catalog: the
// shipped SQL jobs build orders_fact and daily_orders from raw events, a
// backfill alone of a day a record left is refused, the backfill of both
// days rebuilds both tables, a rerun changes nothing; then a naive append
// that doubles, a refused wipe, and a bad publish rolled back. It reads
// the tables as any reader would and checks every number it shows.
package demo
