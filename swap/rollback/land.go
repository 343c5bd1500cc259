package rollback

import (
	"context"

	"github.com/lakeswap/lakeswap/swap/internal/snapshot"
)

// pointBack is a full rollback, of a run or of a release, on its way
// through the commit engine (snapshot.Land): main of each table pointed
// at a snapshot it held, pinned to main as the rollback was judged
// against it, then read back. It is never rebased: the guards judged it
// against that main, and a main that moved since is judged again by
// running the rollback again.
type pointBack struct {
	changes  []*snapshot.Change
	readBack func(context.Context) error
	landed   bool
}

func (b *pointBack) Build(context.Context) ([]*snapshot.Change, error) { return b.changes, nil }

func (*pointBack) Rebase(context.Context, *snapshot.Refused) (string, error) {
	return "main moved since the rollback was judged against it", nil
}

func (b *pointBack) ReadBack(ctx context.Context) error {
	b.landed = true
	return b.readBack(ctx)
}
