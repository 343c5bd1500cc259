package swap

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go/table"

	"github.com/lakeswap/lakeswap/catalog"
	"github.com/lakeswap/lakeswap/runrecord"
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
	parts    []*releasePart
	// discarded says what Discard did, once it has.
	discarded string
}

// releasePart is one table's share of a release.
type releasePart struct {
	plan *Plan
	tbl  *table.Table
	// readBy are the tables of the release staged from this one's staged
	// rows: it must commit on the snapshot they read, never rebased.
	readBy []string
	res    *Result
	id     int64 // the snapshot its commit makes
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

func (r *Release) part(name string) *releasePart {
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
		return nil, InvalidRequest(fmt.Errorf("table %s is named twice in the release: one job a table", name))
	}
	if req.Batch > 0 {
		return nil, InvalidRequest(errors.New("a release commits every table in one commit: --batch and --commit-per-partition do not apply"))
	}
	req.RunID = r.RunID
	kind := "run"
	if r.Planning {
		kind = "plan"
	}
	plan, tbl, err := r.p.stage(ctx, req, kind)
	if err != nil {
		r.Discard(ctx)
		return nil, err
	}
	r.parts = append(r.parts, &releasePart{plan: plan, tbl: tbl})
	if err := r.reused(ctx, plan, tbl); err != nil {
		r.Discard(ctx)
		return nil, err
	}
	return plan, nil
}

// reused refuses, as soon as the table is staged, a release id the table
// records for other content: a rerun of the release commits nothing, and
// another release needs an id of its own. Said as a finding of the plan,
// which Refusal reports.
func (r *Release) reused(ctx context.Context, plan *Plan, tbl *table.Table) error {
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
	plan.Findings = append(plan.Findings, verify.Finding{Kind: verify.KindRunID, Message: fmt.Sprintf(
		"run id %s was already used by snapshot %d for other content of %s (fingerprint %s); this release stages %s there: release it under a new run id",
		r.RunID, plan.prior.SnapshotID, plan.Table, short(rec.Fingerprint), short(plan.Fingerprint.Hash))})
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
	replaced := map[string]bool{}
	for _, pp := range plan.Partitions {
		if pp.same() {
			continue
		}
		for _, f := range slices.Concat(pp.OldFiles, pp.OldDeletes) {
			replaced[f.Path] = true
		}
	}
	for _, path := range plan.shares() {
		replaced[path] = true
	}
	base := "none"
	if plan.BaseSnapshotID != nil {
		base = fmt.Sprint(*plan.BaseSnapshotID)
		_, main, err := r.p.SnapshotFiles(ctx, part.tbl.Identifier(), *plan.BaseSnapshotID)
		if err != nil {
			return "", nil, true, err
		}
		for _, f := range main {
			path := f.URL
			if _, _, p, err := ParseDeletedInput(f.URL); err == nil {
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
		return nil, InvalidRequest(fmt.Errorf("plans of release %s: "+format, append([]any{first.RunID}, args...)...))
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
	for _, plan := range plans {
		tbl, err := p.loadPlans(ctx, []*Plan{plan})
		if err != nil {
			return fail(err)
		}
		unhold, _, err := p.holdPlans(ctx, tbl, []*Plan{plan})
		if err != nil {
			return fail(err)
		}
		r.unhold = append(r.unhold, unhold)
		if err := p.bind(ctx, tbl, plan, opts); err != nil {
			return fail(err)
		}
		if head := tbl.CurrentSnapshot(); len(plan.ReadBy) > 0 && plan.prior == nil && movedFrom(head, plan.BaseSnapshotID) {
			return fail(&OpError{Op: "apply", Table: plan.Table, RunID: plan.RunID,
				Err:  fmt.Errorf("%w: table %s moved since the release was planned (main at %s, planned against %s), and %s read it as planned", ErrConflict, plan.Table, snapshot.Describe(head), fmtID(plan.BaseSnapshotID), strings.Join(plan.ReadBy, ", ")),
				Hint: "nothing was committed to any table of the release; plan the release again (`lakeswap discard` removes what these plans staged)"})
		}
		r.parts = append(r.parts, &releasePart{plan: plan, tbl: tbl, readBy: plan.ReadBy})
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
		return part.plan
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
			return nil, &RefusedError{Op: "plan", Table: part.plan.Table, Findings: part.plan.Findings, Dropped: part.plan.DroppedFindings,
				Cleanup: fmt.Sprintf("no plan was written for any table of release %s (%s)", r.RunID, strings.Join(names, ", "))}
		}
		part.plan.Release, part.plan.ReadBy = names, part.readBy
		plans = append(plans, part.plan)
	}
	return plans, nil
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
			return &RefusedError{Op: op, Table: part.plan.Table, Findings: part.plan.Findings, Dropped: part.plan.DroppedFindings,
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
		said = append(said, part.plan.Table+": "+r.p.discard(ctx, part.tbl, part.plan))
		part.plan.unhold(ctx, r.p, part.tbl)
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
// each back; see Release. The error matches ErrRefused, ErrConflict,
// ErrCommitUnknown, ErrVerifyFailed as a run's does, and names the table
// that caused it; nothing is committed to any table unless every table
// is.
func (r *Release) Publish(ctx context.Context, noAutoRollback bool) (*ReleaseResult, error) {
	out := &ReleaseResult{RunID: r.RunID, Status: StatusNotCommitted}
	names := r.Tables()
	for _, part := range r.parts {
		part.plan.Release, part.plan.ReadBy = names, part.readBy
		part.res = &Result{Plan: part.plan, Status: StatusNotCommitted}
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
				r.p.release(ctx, part.tbl, part.plan)
			}
		}
	}()
	// 1. A table refused refuses the release.
	if err := r.Refusal(ctx); err != nil {
		for _, part := range r.parts {
			if part.plan.Refused() {
				part.res.Status = StatusRefused
			}
		}
		return out, err
	}
	// 2. A release id the tables record already: the same content still
	//    on main is the release, published; anything else is refused.
	if res, err, settled := r.rerun(ctx); settled {
		return res, err
	}
	// 3. Tables whose partitions hold the staged content already commit
	//    no snapshot: each is held where the release found it in the same
	//    commit (where another table of the release read it), its snapshot
	//    tagged with the release, so that a reader pins every table of it.
	//    The rest commit together.
	var commit, guards []*releasePart
	for _, part := range r.parts {
		if part.plan.empty() || part.plan.changesNothing() {
			part.res.Status = StatusUnchanged
			r.dropStaged(ctx, part)
			guards = append(guards, part)
			continue
		}
		commit = append(commit, part)
	}
	if len(commit) == 0 {
		out.Status = StatusUnchanged
		return out, nil
	}
	if r.p.BeforeCommit != nil {
		for _, part := range commit {
			if err := r.p.BeforeCommit(ctx, part.plan); err != nil {
				return out, &OpError{Op: "commit", Table: part.plan.Table, RunID: r.RunID, Err: err,
					Hint: "nothing was committed to any table of the release; " + r.Discard(ctx)}
			}
		}
	}
	// 4. One commit across the tables.
	r.p.progress().Step("commit")
	if err := r.commit(ctx, commit, guards); err != nil {
		if errors.Is(err, ErrCommitUnknown) || errors.Is(err, ErrNotLanded) {
			keep = true
			return out, err
		}
		op := (*OpError)(nil)
		if !errors.As(err, &op) {
			op = &OpError{Op: "commit", Table: commit[0].plan.Table, RunID: r.RunID, Err: err, Hint: "nothing was committed to any table of the release"}
			err = op
		}
		op.Hint += "; " + r.Discard(ctx)
		return out, err
	}
	for _, part := range commit {
		part.res.SnapshotID, part.res.CommittedOn, part.res.Status = part.id, part.plan.committedOn, StatusLandedUnverified
	}
	// 5. Each table read back; any that differs takes the whole release
	//    back, in one commit.
	return r.verify(ctx, commit, out, noAutoRollback)
}

// dropStaged removes what a table of the release staged, which it does
// not commit: a plan read back only where no snapshot references it, as
// an apply does.
func (r *Release) dropStaged(ctx context.Context, part *releasePart) {
	if !part.plan.bound {
		part.plan.Cleanup = r.p.discard(ctx, part.tbl, part.plan)
		return
	}
	said, err := r.p.discardListed(ctx, part.tbl, part.plan)
	if err != nil {
		said = fmt.Sprintf("the plan's staged files were left in place: %v", err)
	}
	part.plan.Cleanup = said
}

// rerun settles a release whose run id its tables record already.
func (r *Release) rerun(ctx context.Context) (*ReleaseResult, error, bool) {
	recorded := slices.ContainsFunc(r.parts, func(part *releasePart) bool { return part.plan.prior != nil })
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
				r.dropStaged(ctx, part)
				continue
			}
			part.res.Status = StatusRefused
			part.plan.Cleanup = r.p.discard(ctx, part.tbl, part.plan)
			refused = &OpError{Op: "publish", Table: part.plan.Table, RunID: r.RunID, Err: fmt.Errorf("%w: release %s was published before, and table %s would change now; publish it under a new run id", ErrRefused, r.RunID, part.plan.Table)}
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

// commit moves every table of commit in one catalog commit, rebasing a
// table whose main moved elsewhere as a run's commit does, except a table
// another of the release read: that one commits on the snapshot it was
// read at, or not at all. The commit holds each of guards, the tables it
// leaves unchanged, where the release found them (hold).
func (r *Release) commit(ctx context.Context, commit, guards []*releasePart) error {
	cat, ok := r.p.Catalog.(TablesCommitter)
	if !ok {
		return &OpError{Op: "commit", Table: commit[0].plan.Table, RunID: r.RunID, Err: errors.New("this catalog cannot commit several tables as one"),
			Hint: "nothing was committed; a release needs a REST or SQL catalog"}
	}
	for attempt := 1; ; attempt++ {
		pcs := make([]*pendingCommit, 0, len(commit))
		removeAll := func() string {
			var said []string
			for _, pc := range pcs {
				said = append(said, pc.removeWritten(ctx, r.p))
			}
			return strings.Join(said, "; ")
		}
		var commits []table.TableCommit
		for _, part := range commit {
			pc, err := r.p.prepareCommit(ctx, part.tbl, part.plan)
			if err == nil {
				pcs = append(pcs, pc)
				var tc table.TableCommit
				tc, err = pc.tableCommit()
				commits = append(commits, tc)
			}
			if err != nil {
				removeAll()
				return err
			}
			part.id = pc.id
		}
		if err := r.nameSnapshots(commits, commit, guards); err != nil {
			removeAll()
			return err
		}
		for _, g := range guards {
			commits = append(commits, r.hold(g))
		}
		err := cat.CommitTables(ctx, commits)
		if err == nil {
			for _, part := range commit {
				if head := part.tbl.CurrentSnapshot(); head != nil {
					part.plan.committedOn = head.SnapshotID
				}
			}
			return nil
		}
		first := commit[0]
		if errors.Is(err, catalog.ErrNotApplied) && !errors.Is(err, table.ErrCommitFailed) {
			removeAll()
			return &OpError{Op: "commit", Table: first.plan.Table, RunID: r.RunID, Err: err, Hint: "nothing was committed to any table of the release"}
		}
		if !errors.Is(err, table.ErrCommitFailed) {
			return r.settle(ctx, commit, err)
		}
		// Answered refused: a request sent again after the first applied
		// is answered so; the table tells.
		if landed, lerr := snapshot.AnsweredRefused(ctx, r.p.Catalog, first.tbl, first.id); lerr != nil {
			return r.settle(ctx, commit, errors.Join(err, lerr))
		} else if landed {
			return r.settle(ctx, commit, err)
		}
		removeAll()
		why, who, rerr := r.rebase(ctx, slices.Concat(guards, commit))
		if rerr != nil {
			return errors.Join(err, rerr)
		}
		if why == "" && attempt >= snapshot.RebaseAttempts {
			why = fmt.Sprintf("main of the release's tables kept moving over %d attempts", attempt)
		}
		if why != "" {
			return &OpError{Op: "commit", Table: who, RunID: r.RunID,
				Err:  fmt.Errorf("%w: %s", ErrConflict, why),
				Hint: "nothing was committed to any table of the release, and the other commits are intact; run the release again against main as it is now"}
		}
		r.p.log().Info("a table of the release moved, but not in its partitions; committing on the new heads", "run", r.RunID, "attempt", attempt+1)
	}
}

// nameSnapshots records in each new snapshot of the release every
// table's snapshot of it (lakeswap.release-snapshots): the ids are
// decided once every table's commit is built, after each snapshot's
// summary was, so it is written into the summary each commit sends.
func (r *Release) nameSnapshots(commits []table.TableCommit, commit, guards []*releasePart) error {
	ids := map[string]string{}
	for _, part := range commit {
		ids[part.plan.Table] = strconv.FormatInt(part.id, 10)
	}
	for _, g := range guards {
		if head := g.tbl.CurrentSnapshot(); head != nil {
			ids[g.plan.Table] = strconv.FormatInt(head.SnapshotID, 10)
		}
	}
	b, err := json.Marshal(ids)
	if err != nil {
		return err
	}
	for i, tc := range commits {
		found := false
		for _, u := range tc.Updates {
			if u.Action() != table.UpdateAddSnapshot {
				continue
			}
			// iceberg-go's update carries the snapshot it adds, its
			// summary a map this commit alone holds.
			v := reflect.ValueOf(u)
			if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
				continue
			}
			f := v.Elem().FieldByName("Snapshot")
			if !f.IsValid() || !f.CanInterface() {
				continue
			}
			snap, ok := f.Interface().(*table.Snapshot)
			if !ok || snap == nil || snap.Summary == nil || snap.SnapshotID != commit[i].id {
				continue
			}
			snap.Summary.Properties[runrecord.PropReleaseSnapshots] = string(b)
			found = true
		}
		if !found {
			return fmt.Errorf("the commit of %s adds no snapshot %d to name the release's snapshots in", commit[i].plan.Table, commit[i].id)
		}
	}
	return nil
}

// hold is the commit of a table of the release that changes nothing: its
// main held where the release found it, at the snapshot another table of
// the release read, and tagged with the release there.
func (r *Release) hold(part *releasePart) table.TableCommit {
	meta := part.tbl.Metadata()
	head := meta.CurrentSnapshot()
	tc := table.TableCommit{Identifier: part.tbl.Identifier(), Updates: []table.Update{}, Requirements: []table.Requirement{table.AssertTableUUID(meta.TableUUID())}}
	if head == nil {
		tc.Requirements = append(tc.Requirements, table.AssertRefSnapshotID(table.MainBranch, nil))
		return tc
	}
	tc.Requirements = append(tc.Requirements, table.AssertRefSnapshotID(table.MainBranch, &head.SnapshotID))
	tc.Updates = append(tc.Updates, snapshot.TagRun(ReleaseTag(r.RunID), head.SnapshotID, r.p.RollbackRetention))
	return tc
}

// rebase loads every table of commit again after a refused commit and
// says why the release cannot be committed on their heads now, naming
// the table, or "" having pointed every plan at its head.
func (r *Release) rebase(ctx context.Context, commit []*releasePart) (why, who string, err error) {
	for _, part := range commit {
		now, err := r.p.Catalog.LoadTable(ctx, part.tbl.Identifier())
		if err != nil {
			return "", "", err
		}
		name, head := part.plan.Table, now.CurrentSnapshot()
		if len(runrecord.FindAll(now.Metadata(), r.RunID)) > 0 {
			return fmt.Sprintf("another attempt of release %s committed to %s meanwhile; run it again to settle it", r.RunID, name), name, nil
		}
		if !movedFrom(head, part.plan.BaseSnapshotID) {
			part.tbl = now
			continue
		}
		if len(part.readBy) > 0 {
			return fmt.Sprintf("table %s moved since the release staged it (main at %s, staged against %s), and %s read it as staged",
				name, snapshot.Describe(head), fmtID(part.plan.BaseSnapshotID), strings.Join(part.readBy, ", ")), name, nil
		}
		why, err := rebase(ctx, now, part.plan)
		if why != "" || err != nil {
			return fmt.Sprintf("table %s: main moved since the plan's base snapshot %s: %s", name, fmtID(part.plan.BaseSnapshotID), why), name, err
		}
		part.tbl = now
	}
	return "", "", nil
}

// movedFrom says whether main, at head, is elsewhere than base.
func movedFrom(head *table.Snapshot, base *int64) bool {
	if head == nil || base == nil {
		return (head == nil) != (base == nil)
	}
	return head.SnapshotID != *base
}

// settle finds out, after an answer that says nothing sure, whether the
// release's commit landed: all of its tables' snapshots, or none.
func (r *Release) settle(ctx context.Context, commit []*releasePart, cause error) error {
	landed, lost := 0, 0
	var unknown error
	for _, part := range commit {
		id := part.id
		err := snapshot.LookFor(ctx, r.p.Catalog, r.p.log(), part.tbl, r.RunID, id, cause, func(m table.Metadata) bool { return m.SnapshotByID(id) != nil })
		switch {
		case err == nil:
			landed++
		case errors.Is(err, ErrNotLanded):
			lost++
		default:
			unknown = err
		}
	}
	switch {
	case landed == len(commit):
		r.p.log().Warn("the catalog answered the release's commit with an error, but it landed", "run", r.RunID, "answer", cause)
		for _, part := range commit {
			if head := part.tbl.CurrentSnapshot(); head != nil {
				part.plan.committedOn = head.SnapshotID
			}
		}
		return nil
	case lost == len(commit):
		return &OpError{Op: "commit", Table: commit[0].plan.Table, RunID: r.RunID, Err: fmt.Errorf("%w: %v", ErrNotLanded, cause),
			Hint: "no table of the release holds its commit; run the release again with the same run id (should the commit land late after all, the rerun finds it); the staged files were kept, and `lakeswap gc` removes them once past its grace period"}
	}
	if unknown == nil {
		unknown = fmt.Errorf("%w: %v; %d of the release's %d tables hold its commit", ErrCommitUnknown, cause, landed, len(commit))
	}
	var where []string
	for _, part := range commit {
		where = append(where, fmt.Sprintf("%s snapshot %d", part.plan.Table, part.id))
	}
	return &OpError{Op: "commit", Table: commit[0].plan.Table, RunID: r.RunID, Err: unknown,
		Hint: fmt.Sprintf("the commit would be %s; `lakeswap status --table %s --run %s` answers from the tables' history whether it landed; the staged files were kept, since the commit may reference them",
			strings.Join(where, ", "), commit[0].plan.Table, r.RunID)}
}

// verify reads every table's commit back; if any differs, the release is
// rolled back whole in one commit, unless noAutoRollback.
func (r *Release) verify(ctx context.Context, commit []*releasePart, out *ReleaseResult, noAutoRollback bool) (*ReleaseResult, error) {
	var failed []string
	var errs []error
	for _, part := range commit {
		mismatches, err := r.p.checkLanded(ctx, part.plan, part.id)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", part.plan.Table, err))
			continue
		}
		if len(mismatches) > 0 {
			part.res.Mismatches = mismatches
			part.res.Status = StatusVerifyFailed
			failed = append(failed, fmt.Sprintf("%s snapshot %d differs from the staged plan: %v", part.plan.Table, part.id, mismatches))
			continue
		}
		part.res.Status = StatusPublished
	}
	first := commit[0].plan.Table
	if len(errs) > 0 && len(failed) == 0 {
		out.Status = StatusLandedUnverified
		return out, &OpError{Op: "verify", Table: first, RunID: r.RunID, Err: fmt.Errorf("%w: %w", ErrLandedUnverified, errors.Join(errs...)),
			Hint: fmt.Sprintf("the release landed and main holds it, but it could not be read back to check it; finish the check with `lakeswap verify --table %s --run %s` (and roll it back if that fails)", first, r.RunID)}
	}
	if len(failed) == 0 {
		out.Status = StatusPublished
		for _, part := range commit {
			r.p.dropUnchanged(ctx, part.tbl, part.plan)
		}
		return out, nil
	}
	verr := fmt.Errorf("%w: %s", ErrVerifyFailed, strings.Join(failed, "; "))
	if noAutoRollback {
		out.Status = StatusVerifyFailed
		return out, &OpError{Op: "verify", Table: first, RunID: r.RunID, Err: verr,
			Hint: fmt.Sprintf("kept as asked (--no-auto-rollback); undo the whole release with `lakeswap rollback --table %s --run %s`", first, r.RunID)}
	}
	if _, rerr := r.p.Rollback(ctx, RollbackRequest{Table: commit[0].tbl.Identifier(), RunID: r.RunID}); rerr != nil {
		out.Status = StatusLandedUnverified
		return out, &OpError{Op: "verify", Table: first, RunID: r.RunID, Err: fmt.Errorf("%w: %w", ErrLandedUnverified, errors.Join(verr, rerr)),
			Hint: fmt.Sprintf("the automatic rollback of the release failed; run `lakeswap history --table %s` and roll back by hand with `lakeswap rollback --table %s --run %s`", first, first, r.RunID)}
	}
	out.Status = StatusRolledBack
	for _, part := range commit {
		part.res.Status = StatusRolledBack
	}
	return out, &OpError{Op: "verify", Table: first, RunID: r.RunID, Err: verr, Hint: "every table of the release was rolled back, in one commit, to the snapshot the release replaced"}
}
