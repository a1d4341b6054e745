-- Buyers' and sellers' view of leases, from billing.leases (one row per lease). Events of one
-- lease may be read in any order on a replay, so every event upserts what it carries:
-- `opened` says lease.opened was read (until then the lease is not shown; the fields only it
-- carries are null), totals are replaced only by an event with a period at least as high
-- (`period` null: none read yet), and only lease.ended sets status, which never goes back.
CREATE TABLE leases (
    id                   text        PRIMARY KEY,
    opened               boolean     NOT NULL DEFAULT false,
    order_id             text,
    offer_id             text,
    buyer_id             text        NOT NULL,
    seller_id            text,
    gpu                  text,
    tier                 text,
    gpus                 integer     CHECK (gpus >= 1),
    price_micros         bigint      CHECK (price_micros > 0),
    currency             text        CHECK (currency IN ('EUR', 'USD', 'GBP')),
    wallet_currency      text        NOT NULL CHECK (wallet_currency IN ('EUR', 'USD', 'GBP')),
    billing              text,
    hours                integer,
    started_at           timestamptz,
    ends_at              timestamptz,
    status               text        NOT NULL DEFAULT 'running'
                                     CHECK (status IN ('running', 'ended')),
    end_reason           text,
    ended_at             timestamptz,
    unpaid_micros        bigint      NOT NULL DEFAULT 0,
    low_balance_at       timestamptz,
    period               integer     CHECK (period >= 0),
    charged_through      timestamptz,
    total_charged_micros bigint      NOT NULL DEFAULT 0,
    total_paid_micros    bigint      NOT NULL DEFAULT 0,
    total_fee_micros     bigint      NOT NULL DEFAULT 0,
    total_seller_micros  bigint      NOT NULL DEFAULT 0,
    updated_at           timestamptz NOT NULL
);
CREATE INDEX leases_buyer ON leases (buyer_id, id);
CREATE INDEX leases_seller ON leases (seller_id, id);

-- Statements: one row per line of each ledger.posted (billing.ledger); a replayed transfer
-- adds nothing. seq breaks ties between lines of one instant and is the pagination cursor.
CREATE TABLE ledger_lines (
    seq           bigserial   PRIMARY KEY,
    transfer_id   text        NOT NULL,
    owner         text        NOT NULL,
    currency      text        NOT NULL CHECK (currency IN ('EUR', 'USD', 'GBP')),
    account_kind  text        NOT NULL,
    transfer_kind text        NOT NULL,
    amount_micros bigint      NOT NULL,
    created_at    timestamptz NOT NULL,
    reference     text        NOT NULL DEFAULT '',
    fx_rate       numeric,
    fx_base       text,
    fx_quote      text,
    fx_rate_at    timestamptz,
    UNIQUE (transfer_id, owner, currency, account_kind)
);
CREATE INDEX ledger_lines_owner ON ledger_lines (owner, created_at DESC, seq DESC);
