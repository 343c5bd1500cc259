package swap

import (
	"errors"
	"fmt"
	"strings"

	"github.com/lakeswap/lakeswap/catalog"
	"github.com/lakeswap/lakeswap/verify"
)

// The outcomes of a publish or rollback that callers act on differently. Each
// typed error below matches one of these with errors.Is.
var (
	// ErrRefused: validation found problems; nothing was committed and the
	// staged files were removed.
	ErrRefused = errors.New("refused by validation")
	// ErrConflict: main moved since the plan; nothing was committed. A fresh
	// run may succeed.
	ErrConflict = catalog.ErrConflict
	// ErrCommitUnknown: the catalog did not say whether the commit landed,
	// and the table could not be read back to find out. Staged files are
	// kept, since the commit may reference them; `lakeswap status` answers
	// later from the table's history.
	ErrCommitUnknown = errors.New("commit outcome unknown")
	// ErrNotLanded: the catalog answered a commit with an error, and the
	// table read back shows that it did not land. Nothing was committed;
	// the staged files are kept for gc.
	ErrNotLanded = errors.New("commit did not land")
	// ErrVerifyFailed: the commit landed but does not hold what was staged;
	// it was rolled back, unless the caller asked to keep it.
	ErrVerifyFailed = errors.New("verification failed")
	// ErrLandedUnverified: the commit landed and main holds it, but it could
	// not be read back to check it, or it was found wrong and could not be
	// rolled back. VerifyRun finishes the check.
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

// OpError carries what an operator needs about a failed step: the operation,
// the table, the run, and what to do next.
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
