package source

import "github.com/lakeswap/lakeswap/rows"

// Source gives the rows a run publishes for each partition it declares
// (rows.Source, where the protocol reads it).
type Source = rows.Source

// Locator, ObjectReporter and StrayReporter are a Source's optional
// powers (package rows).
type (
	Locator        = rows.Locator
	ObjectReporter = rows.ObjectReporter
	StrayReporter  = rows.StrayReporter
)
