// Package layout is where lakeswap's files lie under a table's location
// and how a name becomes a path segment: partition folders, the folders a
// run's attempts stage into, and the holds that keep them.
package layout
