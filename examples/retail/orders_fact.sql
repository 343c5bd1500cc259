-- One row per order_id: the newest version of each order, across every
-- event the sources hold (so that an order a late correction moved lands
-- in its new day), then the days the run owns, $from to $to.
--
-- Written with aggregates and joins, which the engine spills to disk when
-- they outgrow its memory, rather than window functions, which keep whole
-- rows in memory: this job runs over 10M events under --memory-limit 1GiB.
WITH events AS (
    -- An event delivered again is the same event: keep its first arrival
    -- (copies that arrived at once are one row; copies that differ and
    -- arrived at once are both kept, and the order's grain refuses them).
    SELECT DISTINCT r.*
    FROM raw_events AS r
    SEMI JOIN (
        SELECT event_id, min(ingested_at) AS ingested_at FROM raw_events GROUP BY event_id
    ) AS first
        ON r.event_id IS NOT DISTINCT FROM first.event_id
        AND r.ingested_at IS NOT DISTINCT FROM first.ingested_at
),
versions AS NOT MATERIALIZED (
    -- The newest version of an order has the greatest source_version, then
    -- updated_at, then event_id: one key that sorts as they do, an unknown
    -- one first.
    SELECT *, create_sort_key(
        source_version, 'ASC NULLS FIRST',
        CAST(updated_at AS TIMESTAMPTZ), 'ASC NULLS FIRST',
        event_id, 'ASC NULLS FIRST'
    ) AS version
    FROM events
)
SELECT
    order_id,
    CAST(timezone('UTC', CAST(order_ts AS TIMESTAMPTZ)) AS DATE) AS order_date,
    channel,
    CAST(amount_cents AS BIGINT) AS amount_cents,
    CAST(source_version AS BIGINT) AS source_version,
    CAST(updated_at AS TIMESTAMPTZ) AS updated_at,
    event_id
FROM versions AS v
SEMI JOIN (
    SELECT order_id, max(version) AS version FROM versions GROUP BY order_id
) AS newest
    ON v.order_id IS NOT DISTINCT FROM newest.order_id AND v.version = newest.version
WHERE CAST(timezone('UTC', CAST(order_ts AS TIMESTAMPTZ)) AS DATE) BETWEEN CAST($from AS DATE) AND CAST($to AS DATE)
