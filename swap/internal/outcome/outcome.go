// Package outcome names how a publish, an apply or a rollback ended, for
// callers that act on each differently: the errors swap, swap/rollback and
// swap/gc return, which swap re-exports.
package outcome

import (
	"errors"
	"fmt"
	"strings"

	"github.com/lakeswap/lakeswap/catalog"
	"github.com/lakeswap/lakeswap/verify"
)

// family is an outcome that belongs to a wider one: errors.Is matches it
// and its parent.
type family struct {
	msg    string
	parent error
}

func (f *family) Error() string { return f.msg }
func (f *family) Unwrap() error { return f.parent }

var (
	// ErrNotCommitted: the table is as it was. Refused, conflict and not
	// landed all match it: a caller that needs only to know whether
	// anything changed asks errors.Is(err, ErrNotCommitted).
	ErrNotCommitted = errors.New("nothing was committed")
	// ErrRefused: validation found problems; nothing was committed and the
	// staged files were removed.
	ErrRefused error = &family{"refused by validation", ErrNotCommitted}
	// ErrConflict: main moved since the plan; nothing was committed. A
	// fresh run may succeed. An OpError carrying it matches
	// ErrNotCommitted.
	ErrConflict = catalog.ErrConflict
	// ErrCommitUnknown: the catalog did not say whether the commit landed,
	// and the table could not be read back to find out.
	ErrCommitUnknown = errors.New("commit outcome unknown")
	// ErrNotLanded: the catalog answered a commit with an error, and the
	// table read back shows that it did not land.
	ErrNotLanded error = &family{"commit did not land", ErrNotCommitted}
	// ErrVerifyFailed: the commit landed but does not hold what was staged.
	ErrVerifyFailed = errors.New("verification failed")
	// ErrLandedUnverified: the commit landed and main holds it, but it
	// could not be read back to check it, or it was found wrong and could
	// not be rolled back.
	ErrLandedUnverified = errors.New("commit landed, not verified")
	// ErrRollbackRefused: rolling back would drop later commits or cannot
	// find what to restore.
	ErrRollbackRefused = errors.New("rollback refused")
	// ErrRunNotFound: no snapshot of the table records the run or snapshot
	// named.
	ErrRunNotFound = errors.New("run not found")
)

// RefusedError lists every finding that stopped a stage.
type RefusedError struct {
	Op       string // what was refused: publish (the default), plan, apply, discard
	Table    string
	Findings []verify.Finding
	Dropped  int64  // findings beyond those listed
	Cleanup  string // what became of the staged files
}

func (e *RefusedError) Error() string {
	var b strings.Builder
	n := int64(len(e.Findings)) + e.Dropped
	op := e.Op
	if op == "" {
		op = "publish"
	}
	fmt.Fprintf(&b, "%s of %s refused: %d finding(s); nothing was committed", op, e.Table, n)
	if e.Cleanup != "" {
		b.WriteString("; " + e.Cleanup)
	}
	for _, f := range e.Findings {
		b.WriteString("\n  - ")
		b.WriteString(f.String())
	}
	if e.Dropped > 0 {
		fmt.Fprintf(&b, "\n  ... and %d more", e.Dropped)
	}
	return b.String()
}

func (e *RefusedError) Unwrap() error { return ErrRefused }

// OpError carries what an operator needs about a failed step: the
// operation, the table, the run, and what to do next.
type OpError struct {
	Op    string // stage, commit, verify, rollback
	Table string
	RunID string
	Hint  string
	Err   error
}

func (e *OpError) Error() string {
	s := fmt.Sprintf("%s %s (run %s): %v", e.Op, e.Table, e.RunID, e.Err)
	if e.RunID == "" {
		s = fmt.Sprintf("%s %s: %v", e.Op, e.Table, e.Err)
	}
	if e.Hint != "" {
		s += "\nhint: " + e.Hint
	}
	return s
}

func (e *OpError) Unwrap() error { return e.Err }

// Is makes a conflict ErrNotCommitted too: the catalog's conflict is
// catalog.ErrConflict, which knows nothing of the families here, and every
// conflict reaches a caller as an OpError.
func (e *OpError) Is(target error) bool {
	return target == ErrNotCommitted && errors.Is(e.Err, ErrConflict)
}

// Conflict is an OpError for a plan that no longer holds: nothing was
// committed.
func Conflict(op, table, runID, hint, format string, args ...any) *OpError {
	return &OpError{Op: op, Table: table, RunID: runID, Hint: hint,
		Err: fmt.Errorf("%w: "+format, append([]any{ErrConflict}, args...)...)}
}

// Short is a hash's first 12 characters, as messages show it.
func Short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
