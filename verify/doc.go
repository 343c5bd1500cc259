// Package verify checks a partition's rows against the table's contract
// (package contract): the validation findings a stage is refused for, and
// the order-independent content fingerprint (docs/fingerprint.md) that
// proves a commit holds what was staged.
//
//	acc := verify.NewAccumulator(contract, "2026-01-01", nil)
//	for rec := range batches {
//		acc.Add(rec)
//	}
//	findings, fp := acc.Findings(false), acc.Result()
//
// It does no I/O and imports neither swap nor catalog (internal/layers checks).
package verify
