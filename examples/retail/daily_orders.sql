-- One row per day and channel, from one row per order.
SELECT
    order_date,
    channel,
    CAST(count(*) AS BIGINT) AS order_count,
    CAST(sum(amount_cents) AS BIGINT) AS amount_cents
FROM facts
WHERE order_date BETWEEN CAST($from AS DATE) AND CAST($to AS DATE)
GROUP BY order_date, channel
