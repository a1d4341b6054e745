-- Notifications (issue 15): each account's own events, its webhook endpoints and their
-- deliveries. An account event is written in the transaction that applies what it tells
-- (a view consumer's, or a request's), together with one delivery per enabled endpoint of
-- the account subscribed to its type: the deliveries table is the webhooks' durable queue.
--
-- Readers of the stream page by (txid, seq): a row's txid is its writing transaction's, and
-- only rows of transactions older than every one still running are read
-- (txid < pg_snapshot_xmin(pg_current_snapshot())), so no row can later appear before a
-- cursor already handed out.
CREATE TABLE account_events (
    seq         bigserial   PRIMARY KEY,
    txid        xid8        NOT NULL DEFAULT pg_current_xact_id(),
    id          text        NOT NULL UNIQUE,            -- evt_…, the same in every channel
    account_id  text        NOT NULL,
    type        text        NOT NULL,                   -- e.g. order.filled, lease.ready
    data        jsonb       NOT NULL,
    created_at  timestamptz NOT NULL
);
CREATE INDEX account_events_stream ON account_events (account_id, txid, seq);
CREATE INDEX account_events_created ON account_events (created_at);

CREATE TABLE webhook_endpoints (
    id             text        PRIMARY KEY,             -- whe_…
    account_id     text        NOT NULL REFERENCES accounts (id),
    url            text        NOT NULL CHECK (length(url) <= 2048),
    event_types    text[]      NOT NULL,                -- '*' for every type
    description    text        NOT NULL DEFAULT '' CHECK (length(description) <= 500),
    secret         text        NOT NULL,                -- whsec_…, shown once at creation
    status         text        NOT NULL DEFAULT 'enabled'
                               CHECK (status IN ('enabled', 'disabled')),
    disabled_reason text,
    failing_since  timestamptz,                         -- the first failure of the run
    created_at     timestamptz NOT NULL,
    updated_at     timestamptz NOT NULL
);
CREATE INDEX webhook_endpoints_account ON webhook_endpoints (account_id, id);

CREATE TABLE webhook_deliveries (
    id              text        PRIMARY KEY,            -- whd_…
    endpoint_id     text        NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
    account_id      text        NOT NULL,
    event_id        text        NOT NULL REFERENCES account_events (id),
    status          text        NOT NULL DEFAULT 'pending'
                                CHECK (status IN ('pending', 'succeeded', 'failed')),
    attempts        integer     NOT NULL DEFAULT 0,
    next_attempt_at timestamptz,                        -- NULL once no attempt is due
    last_attempt_at timestamptz,
    last_status     integer,                            -- the receiver's HTTP status
    last_error      text,
    created_at      timestamptz NOT NULL,
    UNIQUE (endpoint_id, event_id)
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at)
    WHERE status = 'pending';
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, id);
