package keysort

// NewSmall is New without the floor on the budget, so that a test writes
// many runs from few entries.
func NewSmall(dir string, budget int) *Sorter {
	return &Sorter{parent: dir, budget: budget}
}
