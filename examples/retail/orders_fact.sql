-- One row per order_id: the newest version of each order, across every
-- event the sources hold (so that an order a late correction moved lands
-- in its new day), then the days the run owns, $from to $to.
WITH events AS (
    -- An event delivered again is the same event: keep its first arrival.
    SELECT * EXCLUDE (arrival) FROM (
        SELECT *, row_number() OVER (PARTITION BY event_id ORDER BY ingested_at) AS arrival
        FROM raw_events
    ) WHERE arrival = 1
),
newest AS (
    SELECT *, row_number() OVER (
        PARTITION BY order_id
        ORDER BY source_version DESC, CAST(updated_at AS TIMESTAMPTZ) DESC, event_id DESC
    ) AS rank
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
FROM newest
WHERE rank = 1
  AND CAST(timezone('UTC', CAST(order_ts AS TIMESTAMPTZ)) AS DATE) BETWEEN CAST($from AS DATE) AND CAST($to AS DATE)
