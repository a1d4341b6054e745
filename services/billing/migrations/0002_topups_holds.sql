-- What billing remembers beside the ledger: top-ups (manual ones wait for the admin) and the
-- hold placed for each order (so final order statuses release what is left of it).

CREATE TABLE topups (
    id            text PRIMARY KEY,
    account_id    text,
    currency      text CHECK (currency IN ('EUR', 'USD', 'GBP')),
    amount_micros bigint CHECK (amount_micros > 0),
    provider      text,
    -- requested: waiting for the provider; booked: on the ledger; rejected: never booked.
    status        text NOT NULL CHECK (status IN ('requested', 'booked', 'rejected')),
    reason        text,
    -- An admin confirmation that arrived before its request (another partition) waits here.
    confirmed     boolean NOT NULL DEFAULT false,
    requested_at  timestamptz,
    updated_at    timestamptz NOT NULL
);

CREATE TABLE holds (
    order_id        text PRIMARY KEY,
    buyer_id        text NOT NULL,
    gpu             text NOT NULL,
    gpus            integer NOT NULL CHECK (gpus > 0),
    currency        text NOT NULL CHECK (currency IN ('EUR', 'USD', 'GBP')),
    held_micros     bigint NOT NULL CHECK (held_micros > 0),
    released_micros bigint NOT NULL DEFAULT 0 CHECK (released_micros >= 0),
    created_at      timestamptz NOT NULL,
    released_at     timestamptz,
    CHECK (released_micros <= held_micros)
);
