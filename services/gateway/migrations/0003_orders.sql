-- The buyers' view of their orders: written when a buyer places one (status pending_funds);
-- status, fills and reasons arrive from billing and the book on orders.status.
CREATE TABLE orders (
    id                 text        PRIMARY KEY,
    buyer_id           text        NOT NULL REFERENCES accounts (id),
    gpu                text        NOT NULL,
    gpus               integer     NOT NULL CHECK (gpus >= 1),
    filled_gpus        integer     NOT NULL DEFAULT 0 CHECK (filled_gpus >= 0),
    remaining_gpus     integer     NOT NULL CHECK (remaining_gpus >= 0),
    type               text        NOT NULL CHECK (type IN ('market', 'limit')),
    max_price_micros   bigint      CHECK (max_price_micros > 0),
    currency           text        NOT NULL CHECK (currency IN ('EUR', 'USD', 'GBP')),
    tier               text        NOT NULL,
    region             text,
    hours              integer,
    time_in_force      text        NOT NULL,
    expires_at         timestamptz,
    status             text        NOT NULL DEFAULT 'pending_funds',
    reason             text,
    shortfall_micros   bigint,
    shortfall_currency text,
    created_at         timestamptz NOT NULL,
    updated_at         timestamptz NOT NULL
);
CREATE INDEX orders_buyer ON orders (buyer_id, id);

-- The fills of each order, from market.trades (one row per trade; seq keeps their order:
-- an order's trades share one partition, keyed by GPU).
CREATE TABLE order_fills (
    trade_id     text        PRIMARY KEY,
    seq          bigserial   NOT NULL,
    order_id     text        NOT NULL,
    buyer_id     text        NOT NULL,
    gpus         integer     NOT NULL CHECK (gpus >= 1),
    price_micros bigint      NOT NULL,
    currency     text        NOT NULL,
    tier         text        NOT NULL,
    billing      text        NOT NULL,
    hours        integer,
    executed_at  timestamptz NOT NULL
);
CREATE INDEX order_fills_order ON order_fills (order_id, seq);
