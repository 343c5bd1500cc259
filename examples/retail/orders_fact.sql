-- One row per order_id: the newest version of each order, across every
-- event the sources hold (so that an order a late correction moved lands
-- in its new day), then the days the run owns, $from to $to.
--
-- Written with aggregates and joins, which the engine spills to disk when
-- they outgrow its memory, rather than window functions, which keep whole
-- rows in memory: this job runs over 10M events under --memory-limit 1GiB.
WITH arrivals AS NOT MATERIALIZED (
    -- Copies of an event rank by arrival (an instant: the text arrives as
    -- written, offset and all), and copies that arrived at once by a hash
    -- of their content: one is kept, the same one on every run (of one
    -- lakeswap: the hash is the engine's).
    SELECT r.*, create_sort_key(try_cast(r.ingested_at AS TIMESTAMPTZ), 'ASC NULLS LAST', hash(r), 'ASC NULLS LAST') AS arrival
    FROM raw_events AS r
),
events AS (
    -- An event delivered again is the same event: keep its first arrival
    -- (copies alike in every column are one row).
    SELECT DISTINCT * EXCLUDE (arrival)
    FROM arrivals AS a
    SEMI JOIN (
        SELECT event_id, min(arrival) AS arrival FROM arrivals GROUP BY event_id
    ) AS first
        ON a.event_id IS NOT DISTINCT FROM first.event_id AND a.arrival = first.arrival
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
