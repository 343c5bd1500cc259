package jsonid_test

import (
	"encoding/json"
	"testing"

	"github.com/lakeswap/lakeswap/internal/jsonid"
)

type doc struct {
	ID   jsonid.Int  `json:"id"`
	Many jsonid.Ints `json:"many"`
}

// Ids print as strings, the largest exactly, and read back from strings
// or numbers; anything else is refused.
func TestIDs(t *testing.T) {
	out, err := json.Marshal(doc{ID: 6101223110543162949, Many: jsonid.Ints{-1, 9223372036854775807}})
	if err != nil || string(out) != `{"id":"6101223110543162949","many":["-1","9223372036854775807"]}` {
		t.Fatalf("%s %v", out, err)
	}
	var d doc
	if err := json.Unmarshal([]byte(`{"id":6101223110543162949,"many":[1,"2"]}`), &d); err != nil || d.ID != 6101223110543162949 || len(d.Many) != 2 || d.Many[1] != 2 {
		t.Fatalf("%+v %v", d, err)
	}
	for _, bad := range []string{`{"id":"1.5"}`, `{"id":true}`, `{"many":["x"]}`, `{"id":"99999999999999999999"}`} {
		if err := json.Unmarshal([]byte(bad), &d); err == nil {
			t.Errorf("%s read as %+v", bad, d)
		}
	}
	if out, _ := json.Marshal(doc{}); string(out) != `{"id":"0","many":[]}` {
		t.Errorf("empty: %s", out)
	}
}
