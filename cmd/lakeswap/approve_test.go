package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/lakeswap/lakeswap/outcome"
	"github.com/lakeswap/lakeswap/swap"
)

// TestApprovalPromptAsksAgain: the typed approval takes the id in either
// case; a mistyped or short id is said and asked again, three times at
// most; an empty line stops; each stop says nothing was committed.
func TestApprovalPromptAsksAgain(t *testing.T) {
	plan := &swap.Plan{RunID: "r", Table: "shop.daily_sales"}
	id := swap.PlanID(plan)
	files := []*swap.PlanFile{{PlanID: id, Plan: plan, Name: "p.json"}}
	wrong := id[:11] + string("0123456789abcdef"[(strings.IndexByte("0123456789abcdef", id[11])+1)%16])
	for _, c := range []struct {
		typed, want, says string
		prompts           int
	}{
		{strings.ToUpper(id[:12]) + "\n", id[:12], "", 1},
		{id[:4] + "\n" + wrong + "\n" + id + "\n", id, "is too short", 3},
		{"x\ny\n" + wrong + "\n" + id + "\n", "", "mistyped 3 times", 3},
		{"\n" + id + "\n", "", "no id was typed", 1},
		{"", "", "the input ended", 1},
	} {
		var out bytes.Buffer
		got, err := askApproval(&out, strings.NewReader(c.typed), files)
		prompts := strings.Count(out.String(), "type the id of p.json")
		if prompts != c.prompts {
			t.Errorf("typed %q: %d prompts, want %d:\n%s", c.typed, prompts, c.prompts, out.String())
		}
		if c.want != "" {
			if err != nil || len(got) != 1 || got[0] != c.want {
				t.Errorf("typed %q: %q, %v; want %q", c.typed, got, err, c.want)
			} else if _, err := swap.Approve(files, got); err != nil {
				t.Errorf("typed %q: not approved: %v", c.typed, err)
			}
			continue
		}
		if !errors.Is(err, outcome.ErrNotApproved) || !strings.Contains(err.Error()+errorFindings(err), c.says) || !strings.Contains(errorFindings(err), "nothing was committed") {
			t.Errorf("typed %q: %v, want not approved saying %q and that nothing was committed", c.typed, err, c.says)
		}
	}
}

func errorFindings(err error) string {
	var r *outcome.RefusedError
	if !errors.As(err, &r) {
		return ""
	}
	var b strings.Builder
	for _, f := range r.Findings {
		b.WriteString(f.Message + "\n")
	}
	return b.String()
}
