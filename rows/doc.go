// Package rows holds what a run reads its rows through: the Source
// interface a publish reads each declared partition through, as Arrow
// record batches, and the optional powers a source may have. It is apart
// from package source, which holds the sources lakeswap provides (and the
// embedded engine they read with), so that the protocol needs neither.
package rows
