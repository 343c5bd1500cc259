// Package rawevents generates the raw order events the retail example's
// orders_fact job reads, at any scale, for its tests and benchmarks.
package rawevents
