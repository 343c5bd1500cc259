package rawevents

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/lakeswap/lakeswap/source"
)

// Write writes n raw order events, as the retail example's
// orders_fact job reads them, to path as Parquet, with the embedded
// engine: 30 days of orders, the last tenth of the events newer versions of
// earlier orders, and one event in fifty the one before it delivered again.
func Write(path string, n int) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "lakeswap-events-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	eng, err := source.OpenSQLEngine(tmp, 1<<30)
	if err != nil {
		return err
	}
	defer eng.Close()
	orders := n * 9 / 10
	q := fmt.Sprintf(`COPY (
		SELECT
			'e' || j AS event_id,
			'o' || (j %% %[2]d) AS order_id,
			['web', 'store', 'app'][1 + (j %% %[2]d) %% 3] AS channel,
			strftime(TIMESTAMP '2026-01-01' + to_seconds(((j %% %[2]d) * 2591) %% (30 * 86400)), '%%Y-%%m-%%dT%%H:%%M:%%SZ') AS order_ts,
			strftime(TIMESTAMP '2026-01-01' + to_seconds(((j %% %[2]d) * 2591) %% (30 * 86400) + j // %[2]d * 60), '%%Y-%%m-%%dT%%H:%%M:%%SZ') AS updated_at,
			1 + j // %[2]d AS source_version,
			(j * 7919) %% 100000 AS amount_cents,
			strftime(TIMESTAMP '2026-01-01' + to_seconds(((j %% %[2]d) * 2591) %% (30 * 86400) + 300 + i - j), '%%Y-%%m-%%dT%%H:%%M:%%SZ') AS ingested_at
		FROM (SELECT i, CASE WHEN i %% 50 = 49 THEN i - 1 ELSE i END AS j FROM range(%[1]d) AS t(i))
	) TO %[3]s (FORMAT parquet)`, n, orders, source.SQLString(path))
	return eng.Exec(context.Background(), q)
}
