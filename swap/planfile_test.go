package swap_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"

	"github.com/lakeswap/lakeswap/swap"
)

// A plan file written before schema and spec ids were strings, with them
// as numbers, still reads, keeps its id and is not taken for edited; a
// plan written now prints them as strings.
func TestPlanWithNumericIDsReads(t *testing.T) {
	plan := `{"run_id":"r","attempt":"0a1b2c3d","table":"retail.daily_orders","base_snapshot_id":"7",` +
		`"partition_column":"order_date","contract":{"schema_id":3,"spec_id":1,"partition":"order_date","transform":"identity","grain":[]},` +
		`"base_schema_id":3,"partitions":[],"staged":true}`
	var compact bytes.Buffer
	if err := json.Compact(&compact, []byte(plan)); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(compact.Bytes())
	id := hex.EncodeToString(sum[:])
	pf, err := swap.DecodePlan("old.json", []byte(`{"plan_id":"`+id+`","plan":`+plan+`}`))
	if err != nil {
		t.Fatal(err)
	}
	if pf.Plan.Contract.SchemaID != 3 || pf.Plan.Contract.SpecID != 1 || pf.Plan.BaseSchemaID == nil || *pf.Plan.BaseSchemaID != 3 {
		t.Errorf("read %+v, base schema %v", pf.Plan.Contract, pf.Plan.BaseSchemaID)
	}
	if err := pf.Unedited("apply"); err != nil {
		t.Errorf("an earlier plan is taken for edited: %v", err)
	}
	out, err := json.Marshal(pf.Plan)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"schema_id":"3"`, `"spec_id":"1"`, `"base_schema_id":"3"`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("a plan written now lacks %s: %s", want, out)
		}
	}
}
