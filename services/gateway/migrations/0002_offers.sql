-- The sellers' view of their offers: written when a seller submits one; status updates
-- arrive from pricing as events (issue: offers and pricing).
CREATE TABLE offers (
    id                 text        PRIMARY KEY,
    seller_id          text        NOT NULL REFERENCES accounts (id),
    gpu                text        NOT NULL,
    gpus               integer     NOT NULL CHECK (gpus >= 1),
    remaining_gpus     integer     NOT NULL CHECK (remaining_gpus >= 0),
    price_micros       bigint      NOT NULL CHECK (price_micros > 0),
    currency           text        NOT NULL CHECK (currency IN ('EUR', 'USD', 'GBP')),
    tier               text        NOT NULL,
    billing            text        NOT NULL,
    region             text,
    min_hours          integer,
    available_until    timestamptz,
    status             text        NOT NULL DEFAULT 'pending',
    reason             text,
    created_at         timestamptz NOT NULL,
    updated_at         timestamptz NOT NULL
);
CREATE INDEX offers_seller ON offers (seller_id, id);
