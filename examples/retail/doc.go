// Package retail ships the retail-orders jobs: orders_fact, built from the
// raw order events, and daily_orders, built from the facts, each with its
// table's schema. lakeswap demo runs them; they are the model for a job of
// one's own.
package retail
