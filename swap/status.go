package swap

// Status is what became of a run: the Result's status, and each batch's.
// It marshals as its text, which -o json prints and scripts match.
type Status string

const (
	// StatusPlanned: staged and validated, waiting for approval; nothing
	// committed (Stage, then a plan file).
	StatusPlanned Status = "planned"
	// StatusPublished: committed and verified.
	StatusPublished Status = "published"
	// StatusAlreadyPublished: the run id was committed before with this
	// content, which main still holds; nothing more was committed.
	StatusAlreadyPublished Status = "already-published"
	// StatusUnchanged: the partitions already hold the staged content;
	// nothing was committed.
	StatusUnchanged Status = "unchanged"
	// StatusRefused: a guard found something; nothing was committed.
	StatusRefused Status = "refused"
	// StatusNotCommitted: a conflict, a commit that did not land, or an
	// error before the commit; nothing was committed by that commit. A run
	// in batches says so of the batch that stopped it: the Result's
	// Batches list those that landed before it.
	StatusNotCommitted Status = "not-committed"
	// StatusRolledBack: the commit landed, failed verification and was
	// rolled back.
	StatusRolledBack Status = "rolled-back"
	// StatusVerifyFailed: the commit landed and failed verification; it
	// was kept, as the run asked.
	StatusVerifyFailed Status = "verify-failed"
	// StatusLandedUnverified: main holds the commit, unchecked, or found
	// wrong and not rolled back.
	StatusLandedUnverified Status = "landed-unverified"
)
