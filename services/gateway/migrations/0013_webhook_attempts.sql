-- Webhooks (issue 15): each attempt of a delivery is logged, and a delivery keeps its run —
-- the failures since it was (re)queued (its backoff's exponent) and the run's first attempt
-- (its retries stop webhooks_retry_for_s after it). A redelivery starts a new run.
ALTER TABLE webhook_deliveries
    ADD COLUMN run_failures     integer     NOT NULL DEFAULT 0,
    ADD COLUMN first_attempt_at timestamptz;

CREATE TABLE webhook_attempts (
    delivery_id text        NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
    n           integer     NOT NULL,                   -- 1 for the delivery's first attempt
    at          timestamptz NOT NULL,
    status      integer,                                -- the receiver's HTTP status
    error       text,                                   -- why no 2xx (timeout, blocked address…)
    duration_ms integer     NOT NULL,
    PRIMARY KEY (delivery_id, n)
);

-- An endpoint's pending deliveries, to stop them when it is disabled and resume them when
-- it is enabled again.
CREATE INDEX webhook_deliveries_endpoint_pending ON webhook_deliveries (endpoint_id)
    WHERE status = 'pending';
