package swap

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/outcome"
	"github.com/lakeswap/lakeswap/runrecord"
	"github.com/lakeswap/lakeswap/swap/history"
	"github.com/lakeswap/lakeswap/swap/internal/snapshot"
	"github.com/lakeswap/lakeswap/verify"
)

// TablesCommitter is a catalog that commits several tables as one change:
// every table moves or none does (catalog.Catalog, on a REST or SQL
// catalog).
type TablesCommitter interface {
	CommitTables(ctx context.Context, commits []table.TableCommit) error
}

// Release is one run over several tables, a table and what reads it,
// committed as one change of the catalog. Each table's partitions are
// staged and guarded as a run of their own (Stage); a table that reads
// another of the release reads it as the release will leave it (Files);
// Publish then moves every table in one commit, each conditioned on the
// snapshot it was staged against, reads each back, and rolls all of them
// back in one commit if any differs. Every table's snapshot records the
// release (lakeswap.release) under the one run id, and takes the tag
// lakeswap-release-<run id>.
type Release struct {
	RunID string
	// unhold ends the holds an apply of the release's plans took.
	unhold []func()
	// Planning stages the tables for plan files, each held until applied
	// or discarded, rather than for Publish.
	Planning bool
	p        *Publisher
	parts    []*change
	// discarded says what Discard did, once it has.
	discarded string
	// judged says Judge has judged the release.
	judged bool
}

// NewRelease starts a release under runID ("" names one).
func (p *Publisher) NewRelease(runID string) *Release {
	if runID == "" {
		runID = NewRunID()
	}
	return &Release{RunID: runID, p: p}
}

// Tables names the release's tables, in the order they were staged.
func (r *Release) Tables() []string {
	out := make([]string, len(r.parts))
	for i, part := range r.parts {
		out[i] = part.plan.Table
	}
	return out
}

// Rebuilds says whether the release rebuilds a table, by name.
func (r *Release) Rebuilds(name string) bool { return r.part(name) != nil }

func (r *Release) part(name string) *change {
	for _, part := range r.parts {
		if part.plan.Table == name {
			return part
		}
	}
	return nil
}

// Stage stages one table's share of the release, as Stage stages a run,
// under the release's run id. Nothing is committed until Publish.
func (r *Release) Stage(ctx context.Context, req Request) (*Plan, error) {
	name := strings.Join(req.Table, ".")
	if r.part(name) != nil {
		return nil, outcome.Invalid(fmt.Errorf("table %s is named twice in the release: one job a table", name))
	}
	if req.Batch > 0 {
		return nil, outcome.Invalid(errors.New("a release commits every table in one commit: --batch and --commit-per-partition do not apply"))
	}
	req.RunID, req.release = r.RunID, r
	kind := "run"
	if r.Planning {
		kind = "plan"
	}
	plan, tbl, err := r.p.stage(ctx, req, kind)
	if err != nil {
		r.Discard(ctx)
		return nil, err
	}
	r.parts = append(r.parts, &change{plan: plan, tbl: tbl})
	if err := r.reused(ctx, plan, tbl); err != nil {
		r.Discard(ctx)
		return nil, err
	}
	return plan.Plan, nil
}

// reused refuses, as soon as the table is staged, a release id the table
// records for other content: a rerun of the release commits nothing, and
// another release needs an id of its own. Said as a finding of the plan,
// which Refusal reports.
func (r *Release) reused(ctx context.Context, plan *run, tbl *table.Table) error {
	if plan.prior == nil || plan.Refused() {
		return nil
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return err
	}
	rec, _, err := runrecord.NewLoader(fsys).Snapshot(plan.prior)
	if err != nil {
		return err
	}
	if rec.Fingerprint == plan.Fingerprint.Hash {
		return nil
	}
	plan.refuse(GuardRelease, verify.Finding{Kind: verify.KindRelease, Message: fmt.Sprintf(
		"run id %s was already used by snapshot %d for other content of %s (fingerprint %s); this release stages %s there: release it under a new run id",
		r.RunID, plan.prior.SnapshotID, plan.Table, verify.Short(rec.Fingerprint), verify.Short(plan.Fingerprint.Hash))})
	return nil
}

// Files lists the data files a table of the release holds once the
// release lands, for reader, a table of the release staged from them:
// main's files at the base the table was staged against, those of its
// replaced partitions swapped for the staged ones. ok is false for a
// table the release does not stage. snapshot names what was read.
func (r *Release) Files(ctx context.Context, name, reader string) (snapshotName string, files []runrecord.Input, ok bool, err error) {
	part := r.part(name)
	if part == nil {
		return "", nil, false, nil
	}
	plan := part.plan
	if plan.Refused() {
		return "", nil, true, fmt.Errorf("table %s, which %s reads, was refused in this release", name, reader)
	}
	if !slices.Contains(part.readBy, reader) {
		part.readBy = append(part.readBy, reader)
	}
	replaced := plan.replacedPaths()
	base := "none"
	if plan.BaseSnapshotID != nil {
		base = fmt.Sprint(*plan.BaseSnapshotID)
		_, main, err := history.Of(r.p.Catalog).SnapshotFiles(ctx, part.tbl.Identifier(), *plan.BaseSnapshotID)
		if err != nil {
			return "", nil, true, err
		}
		for _, f := range main {
			path := f.URL
			if _, _, p, err := history.ParseCopiedInput(f.URL); err == nil {
				path = p
			}
			if !replaced[path] {
				files = append(files, f)
			}
		}
	}
	for _, pp := range plan.Partitions {
		if pp.same() {
			continue
		}
		for _, f := range pp.NewFiles {
			files = append(files, runrecord.Input{URL: f.Path, Size: f.Bytes})
		}
	}
	return fmt.Sprintf("%s@%s+release-%s", name, base, r.RunID), files, true, nil
}

// replacedPaths are the files of main, data and deletes, that the plan's
// commit takes out: those of the partitions it changes, and the files it
// rewrites.
func (p *Plan) replacedPaths() map[string]bool {
	replaced := map[string]bool{}
	for _, pp := range p.Partitions {
		if pp.same() {
			continue
		}
		for _, f := range slices.Concat(pp.OldFiles, pp.OldDeletes) {
			replaced[f.Path] = true
		}
	}
	for _, path := range p.shares() {
		replaced[path] = true
	}
	return replaced
}

// BindRelease takes the plans of a release read back from its plan files,
// one per table, every table of the release given, and checks each as
// Apply does: main at the plan's base (or moved elsewhere, for a table no
// other of the release read), the contract the plan was staged under, its
// staged files as written. The release it returns commits them with
// Publish; nothing is committed before. A plan that no longer holds is a
// conflict for the whole release.
func (p *Publisher) BindRelease(ctx context.Context, opts ApplyOptions, plans []*Plan) (*Release, error) {
	if len(plans) == 0 || slices.Contains(plans, nil) {
		return nil, errors.New("apply needs plans, and a plan is missing")
	}
	first := plans[0]
	r := &Release{RunID: first.RunID, p: p}
	refuse := func(format string, args ...any) (*Release, error) {
		return nil, outcome.Invalid(fmt.Errorf("plans of release %s: "+format, append([]any{first.RunID}, args...)...))
	}
	var tables []string
	for _, plan := range plans {
		if plan.RunID != first.RunID || !slices.Equal(plan.Release, first.Release) {
			return refuse("the plan of %s is of run %s, release %s; apply the plans of one release together", plan.Table, plan.RunID, strings.Join(plan.Release, ", "))
		}
		if slices.Contains(tables, plan.Table) {
			return refuse("two plans of table %s: a release stages each table once", plan.Table)
		}
		tables = append(tables, plan.Table)
	}
	if missing := slices.DeleteFunc(slices.Clone(first.Release), func(t string) bool { return slices.Contains(tables, t) }); len(missing) > 0 {
		return refuse("the plan of %s is missing: a release is applied whole, every table's plan together", strings.Join(missing, ", "))
	}
	// In the release's order: the tables read before those reading them.
	slices.SortStableFunc(plans, func(a, b *Plan) int {
		return slices.Index(first.Release, a.Table) - slices.Index(first.Release, b.Table)
	})
	fail := func(err error) (*Release, error) {
		for _, end := range r.unhold {
			end()
		}
		return nil, err
	}
	for _, doc := range plans {
		plan, err := runOf(doc, opts.Jobs)
		if err != nil {
			return fail(err)
		}
		tbl, err := p.loadPlans(ctx, []*run{plan})
		if err != nil {
			return fail(err)
		}
		unhold, _, err := p.holdPlans(ctx, tbl, []*run{plan})
		if err != nil {
			return fail(err)
		}
		r.unhold = append(r.unhold, unhold)
		if err := p.bind(ctx, tbl, plan, opts); err != nil {
			return fail(err)
		}
		if head := tbl.CurrentSnapshot(); len(plan.ReadBy) > 0 && plan.prior == nil && movedFrom(head, plan.BaseSnapshotID) {
			return fail(&outcome.OpError{Op: "apply", Table: plan.Table, RunID: plan.RunID,
				Err:  fmt.Errorf("%w: table %s moved since the release was planned (main at %s, planned against %s), and %s read it as planned", outcome.ErrConflict, plan.Table, snapshot.Describe(head), fmtID(plan.BaseSnapshotID), strings.Join(plan.ReadBy, ", ")),
				Hint: "nothing was committed to any table of the release; plan the release again (`lakeswap discard` removes what these plans staged)"})
		}
		r.parts = append(r.parts, &change{plan: plan, tbl: tbl, readBy: plan.ReadBy})
	}
	return r, nil
}

// Abandon ends a bound release without committing it: its plans keep
// their staged files, as a plan that no longer holds does.
func (r *Release) Abandon(ctx context.Context) {
	for _, end := range r.unhold {
		end()
	}
	r.unhold = nil
}

// Plan is the staged plan of a table of the release, or nil.
func (r *Release) Plan(table string) *Plan {
	if part := r.part(table); part != nil {
		return part.plan.Plan
	}
	return nil
}

// Planned gives every table's plan, each naming the release, for plan
// files that Apply commits together; a table refused refuses them all.
func (r *Release) Planned() ([]*Plan, error) {
	names := r.Tables()
	var plans []*Plan
	for _, part := range r.parts {
		if part.plan.Refused() {
			return nil, &outcome.RefusedError{Op: "plan", Table: part.plan.Table, Findings: part.plan.Findings, Dropped: part.plan.DroppedFindings,
				Cleanup: fmt.Sprintf("no plan was written for any table of release %s (%s)", r.RunID, strings.Join(names, ", "))}
		}
		part.plan.Release, part.plan.ReadBy = names, part.readBy
		plans = append(plans, part.plan.Plan)
	}
	return plans, nil
}

// Judge judges, once every table of the release is staged, what no table
// can judge alone: the relationship checks, each table the release
// rebuilds read as the release leaves it, whatever order the tables were
// staged in. It returns the release's refusal, as Refusal does.
func (r *Release) Judge(ctx context.Context) error {
	if !r.judged {
		r.judged = true
		for _, part := range r.parts {
			if part.plan.Refused() || !hasRelationships(part.plan.contract) {
				continue
			}
			fsys, err := part.tbl.FS(ctx)
			if err != nil {
				return err
			}
			v, err := relationships(ctx, part.plan.reading(fsys), part.plan, func(ctx context.Context, name, column string, typ iceberg.Type) (map[string]bool, string, error) {
				return referenced(ctx, r.p.Catalog.LoadTable, r.part(name), "release", name, column, typ)
			})
			if err != nil {
				return err
			}
			for _, f := range v.Findings {
				part.plan.refuse(GuardChecks, f)
			}
			part.plan.Warnings = append(part.plan.Warnings, v.Warnings...)
		}
	}
	return r.Refusal(ctx)
}

// Refusal is the refusal of the first table of the release a guard
// refused, having removed what every table staged; nil while none is.
func (r *Release) Refusal(ctx context.Context) error {
	for _, part := range r.parts {
		if part.plan.Refused() {
			op := "publish"
			if r.Planning {
				op = "plan"
			}
			return &outcome.RefusedError{Op: op, Table: part.plan.Table, Findings: part.plan.Findings, Dropped: part.plan.DroppedFindings,
				Cleanup: fmt.Sprintf("nothing was committed to any table of release %s (%s); %s", r.RunID, strings.Join(r.Tables(), ", "), r.Discard(ctx))}
		}
	}
	return nil
}

// Discard removes what every table of the release staged, and says so;
// once.
func (r *Release) Discard(ctx context.Context) string {
	if r.discarded != "" {
		return r.discarded
	}
	defer func() {
		if r.discarded == "" {
			r.discarded = "the release had staged nothing"
		}
	}()
	var said []string
	for _, part := range r.parts {
		said = append(said, part.plan.Table+": "+part.plan.discarded(ctx, r.p, part.tbl))
		part.plan.stopRefresh()
		r.p.removeHolds(ctx, part.tbl, part.plan)
	}
	r.discarded = strings.Join(said, "; ")
	return r.discarded
}

// ReleaseResult is what a release did: each table's result, in the order
// the tables were staged.
type ReleaseResult struct {
	RunID  string    `json:"run_id"`
	Status Status    `json:"status"`
	Tables []*Result `json:"tables"`
}

// Publish commits every table of the release as one change, then reads
// each back; see Release. The error matches outcome.ErrRefused, outcome.ErrConflict,
// outcome.ErrCommitUnknown, outcome.ErrVerifyFailed as a run's does, and names the table
// that caused it; nothing is committed to any table unless every table
// is.
func (r *Release) Publish(ctx context.Context, noAutoRollback bool) (*ReleaseResult, error) {
	out := &ReleaseResult{RunID: r.RunID, Status: StatusNotCommitted}
	names := r.Tables()
	for _, part := range r.parts {
		part.plan.Release, part.plan.ReadBy = names, part.readBy
		part.res = &Result{Plan: part.plan.Plan, Status: StatusNotCommitted}
		out.Tables = append(out.Tables, part.res)
	}
	keep := false // an outcome still open keeps every table's hold
	defer func() {
		for _, end := range r.unhold {
			end()
		}
		for _, part := range r.parts {
			part.plan.stopRefresh()
			if !keep {
				r.p.removeHolds(ctx, part.tbl, part.plan)
			}
		}
	}()
	// 1. A table refused refuses the release.
	if err := r.Judge(ctx); err != nil {
		for _, part := range r.parts {
			if part.plan.Refused() {
				part.res.Status = StatusRefused
			}
		}
		return out, err
	}
	// 2. A release id the tables record already: the same content still
	//    on main is the release, published; anything else is refused.
	if res, err, done := r.rerun(ctx); done {
		return res, err
	}
	// 3. Tables whose partitions hold the staged content already commit
	//    no snapshot: each is held where the release found it in the same
	//    commit (where another table of the release read it), its snapshot
	//    tagged with the release, so that a reader pins every table of it.
	//    The rest commit together.
	var commit, guards []*change
	for _, part := range r.parts {
		if part.plan.empty() || part.plan.changesNothing() {
			part.res.Status = StatusUnchanged
			r.discardPart(ctx, part)
			guards = append(guards, part)
			continue
		}
		commit = append(commit, part)
	}
	if len(commit) == 0 {
		out.Status = StatusUnchanged
		return out, nil
	}
	// 4. One commit across the tables, each read back; any that differs
	//    takes the whole release back, in one commit.
	status, err := r.p.land(ctx, r.RunID, commit, guards, noAutoRollback, func() string { return r.Discard(ctx) })
	out.Status = status
	keep = errors.Is(err, outcome.ErrCommitUnknown) || errors.Is(err, outcome.ErrNotLanded)
	return out, err
}

// discardPart removes what a table of the release staged, which it does
// not commit: a plan read back only where no snapshot references it, as
// an apply does.
func (r *Release) discardPart(ctx context.Context, part *change) {
	if !part.plan.bound {
		part.plan.discarded(ctx, r.p, part.tbl)
		return
	}
	said, err := r.p.discardListed(ctx, part.tbl, part.plan)
	if err != nil {
		said = fmt.Sprintf("the plan's staged files were left in place: %v", err)
	}
	part.plan.Cleanup = said
}

// rerun concludes a release whose run id its tables record already.
func (r *Release) rerun(ctx context.Context) (*ReleaseResult, error, bool) {
	recorded := slices.ContainsFunc(r.parts, func(part *change) bool { return part.plan.prior != nil })
	if !recorded {
		return nil, nil, false
	}
	out := &ReleaseResult{RunID: r.RunID, Status: StatusAlreadyPublished}
	var refused error
	for _, part := range r.parts {
		out.Tables = append(out.Tables, part.res)
		if part.plan.prior == nil {
			if part.plan.changesNothing() {
				part.res.Status = StatusUnchanged
				r.discardPart(ctx, part)
				continue
			}
			part.res.Status = StatusRefused
			part.plan.discarded(ctx, r.p, part.tbl)
			refused = &outcome.OpError{Op: "publish", Table: part.plan.Table, RunID: r.RunID, Err: fmt.Errorf("%w: release %s was published before, and table %s would change now; publish it under a new run id", outcome.ErrRefused, r.RunID, part.plan.Table)}
			continue
		}
		res, err := r.p.rerun(ctx, part.tbl, part.plan, part.res)
		if err != nil && refused == nil {
			refused = err
		}
		if res != nil {
			part.res = res
			out.Tables[len(out.Tables)-1] = res
		}
	}
	if refused != nil {
		out.Status = StatusRefused
	}
	return out, refused, true
}
