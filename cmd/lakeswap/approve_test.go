package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/lakeswap/lakeswap/swap"
)

// TestApprovalPromptAsksAgain: the typed approval takes the id in either
// case; a mistyped id is said and asked again, three times at most; an
// empty line stops; what it returns is what swap.Approve then judges.
func TestApprovalPromptAsksAgain(t *testing.T) {
	plan := &swap.Plan{RunID: "r", Table: "shop.daily_sales"}
	id := swap.PlanID(plan)
	files := []*swap.PlanFile{{PlanID: id, Plan: plan, Name: "p.json"}}
	wrong := id[:11] + string("0123456789abcdef"[(strings.IndexByte("0123456789abcdef", id[11])+1)%16])
	for _, c := range []struct {
		typed, want string
		prompts     int
		approved    bool
	}{
		{strings.ToUpper(id[:12]) + "\n", id[:12], 1, true},
		{id[:4] + "\n" + wrong + "\n" + id + "\n", id, 3, true},
		{"x\ny\nz\n" + id + "\n", "z", 3, false},
		{"\n" + id + "\n", "", 1, false},
		{"", "", 1, false},
	} {
		var out bytes.Buffer
		got := askApproval(&out, strings.NewReader(c.typed), files)
		prompts := strings.Count(out.String(), "type the id of p.json")
		if len(got) != 1 || got[0] != c.want || prompts != c.prompts {
			t.Errorf("typed %q: approvals %q after %d prompts, want %q after %d:\n%s", c.typed, got, prompts, c.want, c.prompts, out.String())
		}
		if _, err := swap.Approve(files, got); (err == nil) != c.approved {
			t.Errorf("typed %q: approved %v, want %v", c.typed, err == nil, c.approved)
		}
		if c.prompts > 1 && !strings.Contains(out.String(), "is not the id of p.json") {
			t.Errorf("typed %q: a mistyped id is not said:\n%s", c.typed, out.String())
		}
	}
}
