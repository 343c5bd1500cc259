package snapshot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/apache/iceberg-go/table"
)

// Landing is one run's way through the commit engine: a publish, a batch
// of one, a release of several tables, or a rollback. Land asks it for
// each attempt's commit, for its judgement when main moved, and to read
// back what landed.
type Landing interface {
	// Build makes this attempt's commit, on the tables as the landing
	// holds them now.
	Build(ctx context.Context) ([]*Change, error)
	// Rebase is asked after the catalog refused the commit because main
	// moved (refused matches table.ErrCommitFailed). It loads the tables
	// again and judges the run against what landed since, as the run's
	// guards would: "" to commit on the new heads (Build is asked again),
	// or why it cannot be committed now.
	Rebase(ctx context.Context, refused *Refused) (why string, err error)
	// ReadBack checks what the commit made of the tables.
	ReadBack(ctx context.Context) error
}

// Conflict is a run that could not be committed on main as it is now:
// main moved in a way the run's judgement refused, or kept moving. Nothing
// of the run landed; Refused is the catalog's last answer.
type Conflict struct {
	Why     string
	Refused *Refused
}

func (c *Conflict) Error() string { return c.Why }
func (c *Conflict) Unwrap() error { return c.Refused }

// Land is the one commit engine every run goes through: it sends the
// landing's commit (Send: one catalog operation, an unsure answer settled
// from the tables), rebases while main moved and the run's judgement
// allows it (up to RebaseAttempts), then reads back. It returns what Send
// returned when the commit did not land or is not known to have landed
// (a *Refused for any refusal but main moving), a *Conflict when the
// rebase refused or main kept moving, or ReadBack's error.
func Land(ctx context.Context, cat Catalog, log *slog.Logger, runID string, l Landing) error {
	for attempt := 1; ; attempt++ {
		changes, err := l.Build(ctx)
		if err != nil {
			return err
		}
		err = Send(ctx, cat, log, runID, changes)
		if err == nil {
			break
		}
		refused := (*Refused)(nil)
		if !errors.As(err, &refused) || !errors.Is(err, table.ErrCommitFailed) {
			return err
		}
		why, rerr := l.Rebase(ctx, refused)
		if rerr != nil {
			return errors.Join(err, rerr)
		}
		if why == "" && attempt >= RebaseAttempts {
			why = fmt.Sprintf("main kept moving over %d attempts", attempt)
		}
		if why != "" {
			return &Conflict{Why: why, Refused: refused}
		}
		log.Info("main moved, but not where the run changes; committing on its new head", "run", runID, "attempt", attempt+1)
	}
	return l.ReadBack(ctx)
}
