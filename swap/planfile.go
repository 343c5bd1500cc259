package swap

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/lakeswap/lakeswap/outcome"
	"github.com/lakeswap/lakeswap/verify"
)

// PlanFile is what a plan is approved by and applied from: the plan and
// its id, the SHA-256 of the plan's JSON, so that a plan edited after
// approval is another plan.
type PlanFile struct {
	PlanID string `json:"plan_id"`
	Plan   *Plan  `json:"plan"`
	// DiscardedAt is when discard removed what the plan staged: the plan
	// can no longer be applied. It is not part of the plan (nor its id).
	DiscardedAt *time.Time `json:"discarded_at,omitempty"`
	// Name is the file it was read from or written to.
	Name string `json:"-"`
	// content is the plan's JSON as the file holds it, compacted: what its
	// id was computed from, whichever lakeswap wrote it.
	content []byte
}

// PlanID is the id of a plan: the SHA-256 of its JSON.
func PlanID(p *Plan) string {
	raw, _ := json.Marshal(p)
	return contentID(raw)
}

func contentID(raw []byte) string {
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}

// WritePlan writes a plan file, only where none exists: a plan file is the
// list of what its run staged, for apply and discard, and is never
// overwritten.
func WritePlan(file string, plan *Plan) (*PlanFile, error) {
	pf := &PlanFile{PlanID: PlanID(plan), Plan: plan, Name: file}
	raw, err := json.MarshalIndent(pf, "", "  ")
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	if _, err := f.Write(append(raw, '\n')); err != nil {
		f.Close()
		return nil, err
	}
	return pf, f.Close()
}

// ReadPlan reads a plan file WritePlan wrote. It reads a plan edited since
// (for a person to look at); Unedited says whether it was.
func ReadPlan(file string) (*PlanFile, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, outcome.Invalid(fmt.Errorf("read the plan: %w", err))
	}
	return DecodePlan(file, raw)
}

// DecodePlan reads a plan file's content; file names it in errors.
func DecodePlan(file string, raw []byte) (*PlanFile, error) {
	var doc struct {
		PlanID      string          `json:"plan_id"`
		Plan        json.RawMessage `json:"plan"`
		DiscardedAt *time.Time      `json:"discarded_at"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, outcome.Invalid(fmt.Errorf("%s is not a plan lakeswap wrote: %w", file, err))
	}
	var plan *Plan
	if err := json.Unmarshal(doc.Plan, &plan); err != nil {
		return nil, outcome.Invalid(fmt.Errorf("%s is not a plan lakeswap wrote: %w", file, err))
	}
	if plan == nil {
		return nil, outcome.Invalid(fmt.Errorf("%s is not a plan lakeswap wrote: it holds no plan", file))
	}
	var content bytes.Buffer
	if err := json.Compact(&content, doc.Plan); err != nil {
		return nil, outcome.Invalid(fmt.Errorf("%s is not a plan lakeswap wrote: %w", file, err))
	}
	return &PlanFile{PlanID: doc.PlanID, Plan: plan, DiscardedAt: doc.DiscardedAt, Name: file, content: content.Bytes()}, nil
}

// MarkDiscarded records in a plan file that its staged files were
// removed, so that apply says so rather than find them gone. The plan
// and its id stay as written; the file is replaced whole by a rename.
func MarkDiscarded(file string, at time.Time) error {
	// A plan reached through a link is marked where it lies, with the
	// permissions it had.
	file, err := filepath.EvalSymlinks(file)
	if err != nil {
		return err
	}
	st, err := os.Stat(file)
	if err != nil {
		return err
	}
	raw, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(raw, &doc); err != nil {
		return fmt.Errorf("%s is not a plan lakeswap wrote: %w", file, err)
	}
	when, _ := json.Marshal(at.UTC())
	out, err := json.MarshalIndent(struct {
		PlanID      json.RawMessage `json:"plan_id"`
		Plan        json.RawMessage `json:"plan"`
		DiscardedAt json.RawMessage `json:"discarded_at"`
	}{doc["plan_id"], doc["plan"], when}, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), filepath.Base(file)+".discarding-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // gone once renamed
	if _, err := tmp.Write(append(out, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(st.Mode().Perm()); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), file)
}

// NotDiscarded refuses a plan discard has marked: its staged files are
// gone. op names what is refused.
func (pf *PlanFile) NotDiscarded(op string) error {
	if pf.DiscardedAt == nil {
		return nil
	}
	return outcome.Invalid(fmt.Errorf("%s was discarded at %s (plan %s, run %s): its staged files were removed, so there is nothing to %s; plan the run again",
		pf.Name, pf.DiscardedAt.Format(time.RFC3339), verify.Short(pf.PlanID), pf.Plan.RunID, op))
}

// Unedited refuses a plan whose content no longer has the id it was
// written with: one edited by hand is another plan, which nobody approved
// and whose files lakeswap did not stage. op names what is refused.
func (pf *PlanFile) Unedited(op string) error {
	id := PlanID(pf.Plan)
	if pf.content != nil {
		// As read: the id of the content as written, so that a plan an
		// earlier lakeswap wrote (snapshot ids as numbers, say) keeps its id.
		id = contentID(pf.content)
	}
	if id == pf.PlanID {
		return nil
	}
	return &outcome.RefusedError{Op: op, Table: pf.Plan.Table, Findings: []verify.Finding{{Kind: verify.KindCheck, Where: pf.Name,
		Message: "the plan's content does not have the id it was written with: it was edited after it was planned; plan again"}}}
}

// Approve checks plans read back for an apply: each unedited, each one's
// id approved, by itself or by its first 12 characters or more, and every
// approval naming one of them. It returns the plans, in order.
func Approve(files []*PlanFile, approvals []string) ([]*Plan, error) {
	if len(files) == 0 {
		return nil, errors.New("apply needs plans, and none was given")
	}
	plans := make([]*Plan, len(files))
	for i, pf := range files {
		if err := pf.Unedited("apply"); err != nil {
			return nil, err
		}
		plans[i] = pf.Plan
	}
	if err := approved(files, approvals); err != nil {
		return nil, &outcome.RefusedError{Op: "apply", Table: plans[0].Table, Findings: []verify.Finding{{Kind: verify.KindCheck, Message: err.Error()}}, Cause: outcome.ErrNotApproved}
	}
	return plans, nil
}

func approved(files []*PlanFile, approvals []string) error {
	used := make([]bool, len(approvals))
	for _, pf := range files {
		ok := false
		for j, a := range approvals {
			if len(a) >= 12 && strings.HasPrefix(pf.PlanID, a) {
				ok, used[j] = true, true
			}
		}
		if !ok {
			return fmt.Errorf("%s (plan %s) is %w: no --approve given matches its id", pf.Name, verify.Short(pf.PlanID), outcome.ErrNotApproved)
		}
	}
	for j, a := range approvals {
		if !used[j] {
			return fmt.Errorf("approval %q is not the id of any plan given (%s): %w", a, strings.Join(ShortIDs(files), ", "), outcome.ErrNotApproved)
		}
	}
	return nil
}

// ShortIDs are the plans' ids as a person types them: 12 characters.
func ShortIDs(files []*PlanFile) []string {
	out := make([]string, len(files))
	for i, pf := range files {
		out[i] = verify.Short(pf.PlanID)
	}
	return out
}
