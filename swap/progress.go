package swap

// Progress hears about a publish as it goes, for a CLI to draw; the library
// never draws itself. Implementations must be safe for concurrent use:
// partitions are staged in parallel.
type Progress interface {
	// Step announces a phase: plan, stage, compare (the checks across
	// partitions and against the table), commit, verify, rollback.
	Step(name string)
	// Staged reports a partition whose staging finished, with its rows and
	// the bytes of its staged files.
	Staged(partition string, rows, bytes int64)
}

// NoProgress ignores everything.
type NoProgress struct{}

func (NoProgress) Step(string)                 {}
func (NoProgress) Staged(string, int64, int64) {}

var _ Progress = NoProgress{}
