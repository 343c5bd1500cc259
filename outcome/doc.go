// Package outcome names how a publish, an apply or a rollback ended, for
// callers that act on each differently: every error of lakeswap's that a
// caller matches with errors.Is or errors.As is declared here, and only
// here.
package outcome
