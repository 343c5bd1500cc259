package outcome

import (
	"errors"
	"fmt"
	"strings"

	"github.com/lakeswap/lakeswap/catalog"
	"github.com/lakeswap/lakeswap/internal/words"
	"github.com/lakeswap/lakeswap/verify"
)

var (
	// ErrNotCommitted: the table is as it was. A RefusedError, and an
	// OpError carrying a conflict or a commit that did not land, match it,
	// unless an earlier batch of the same run landed (Partial): a caller
	// that needs only to know whether anything changed asks
	// errors.Is(err, ErrNotCommitted).
	ErrNotCommitted = errors.New("nothing was committed")
	// ErrRefused: validation found problems; nothing was committed and the
	// staged files were removed.
	ErrRefused = errors.New("refused by validation")
	// ErrConflict: main moved since the plan; nothing was committed. A
	// fresh run may succeed.
	ErrConflict = catalog.ErrConflict
	// ErrCommitUnknown: the catalog did not say whether the commit landed,
	// and the table could not be read back to find out.
	ErrCommitUnknown = errors.New("commit outcome unknown")
	// ErrNotLanded: the catalog answered a commit with an error, and the
	// table read back shows that it did not land.
	ErrNotLanded = errors.New("commit did not land")
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
	// ErrNotApproved: an apply named plans without an approval of each
	// one's id, or an approval of no plan given. A RefusedError carries
	// it: nothing was committed.
	ErrNotApproved = errors.New("not approved")
)

// RefusedError lists every finding that stopped a stage.
type RefusedError struct {
	Op       string // what was refused: publish (the default), plan, apply, discard
	Table    string
	Findings []verify.Finding
	Dropped  int64  // findings beyond those listed
	Cleanup  string // what became of the staged files
	// Partial says earlier batches of the run landed before this one was
	// refused: the table is not as it was.
	Partial bool
	// Cause is why, where a caller may act on it (ErrNotApproved).
	Cause error
}

func (e *RefusedError) Error() string {
	var b strings.Builder
	n := int64(len(e.Findings)) + e.Dropped
	op := e.Op
	if op == "" {
		op = "publish"
	}
	fmt.Fprintf(&b, "%s of %s refused: %s; nothing was committed", op, e.Table, words.Count(n, "finding"))
	if e.Cleanup != "" {
		b.WriteString("; " + e.Cleanup)
	}
	// Findings alike but for their row are one line: a wrong input gives
	// thousands of them.
	for i := 0; i < len(e.Findings); {
		f := e.Findings[i]
		j := i + 1
		for j < len(e.Findings) && alike(f, e.Findings[j]) {
			j++
		}
		b.WriteString("\n  - ")
		b.WriteString(f.String())
		if j-i > 1 {
			fmt.Fprintf(&b, "; and %s more like it", words.Number(j-i-1))
		}
		i = j
	}
	if e.Dropped > 0 {
		fmt.Fprintf(&b, "\n  ... and %s more", words.Number(e.Dropped))
	}
	return b.String()
}

func (e *RefusedError) Unwrap() []error {
	if e.Cause != nil {
		return []error{ErrRefused, e.Cause}
	}
	return []error{ErrRefused}
}

// alike says two findings differ at most in their row and where it is.
func alike(a, b verify.Finding) bool {
	return a.Kind == b.Kind && a.Partition == b.Partition && a.Column == b.Column && a.Message == b.Message
}

// Is makes a refusal ErrNotCommitted, unless earlier batches landed.
func (e *RefusedError) Is(target error) bool { return target == ErrNotCommitted && !e.Partial }

// OpError carries what an operator needs about a failed step: the
// operation, the table, the run, and what to do next.
type OpError struct {
	Op    string // stage, commit, verify, rollback
	Table string
	RunID string
	Hint  string
	Err   error
	// Partial says earlier batches of the run landed before this step
	// failed: the table is not as it was.
	Partial bool
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

// Is makes a conflict, and a commit that did not land, ErrNotCommitted,
// unless earlier batches of the run landed. Every such outcome reaches a
// caller as an OpError; the catalog's conflict is catalog.ErrConflict,
// which knows nothing of the outcomes here.
func (e *OpError) Is(target error) bool {
	return target == ErrNotCommitted && !e.Partial && (errors.Is(e.Err, ErrConflict) || errors.Is(e.Err, ErrNotLanded))
}

// MarkPartial notes, on every OpError and RefusedError err holds, that
// earlier batches of the run landed: it no longer matches ErrNotCommitted.
func MarkPartial(err error) {
	var op *OpError
	if errors.As(err, &op) {
		op.Partial = true
	}
	var refused *RefusedError
	if errors.As(err, &refused) {
		refused.Partial = true
	}
}

// invalid marks a request that names something wrong, keeping its
// message as it was.
type invalid struct{ err error }

func (e *invalid) Error() string        { return e.err.Error() }
func (e *invalid) Unwrap() error        { return e.err }
func (e *invalid) Is(target error) bool { return target == ErrInvalidRequest }

// ErrInvalidRequest marks a request that names something wrong (a
// partition selector, a table name, a plan file): the caller's to
// correct, before anything is read.
var ErrInvalidRequest = errors.New("invalid request")

// Invalid marks err as an invalid request; its message is err's.
func Invalid(err error) error {
	if err == nil {
		return nil
	}
	return &invalid{err}
}
