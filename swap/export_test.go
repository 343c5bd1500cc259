package swap

// SetAfterCommit lets tests act between a commit and its verification.
func SetAfterCommit(p *Publisher, f func(*Plan)) { p.afterCommit = f }
