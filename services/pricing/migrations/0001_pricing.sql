-- What pricing knows: sellers (from gateway.accounts), GPU models (from catalog.gpus),
-- FX rates (from fx.rates) and every offer it validated, with its latest revision.
CREATE TABLE sellers (
    account_id text PRIMARY KEY,
    status     text NOT NULL,
    is_seller  boolean NOT NULL
);

CREATE TABLE gpus (
    id   text PRIMARY KEY,
    name text NOT NULL
);

CREATE TABLE fx_rates (
    base  text PRIMARY KEY,
    quote text NOT NULL,
    rate  numeric NOT NULL CHECK (rate > 0),
    as_of timestamptz NOT NULL
);

CREATE TABLE offers (
    offer_id   text PRIMARY KEY,
    seller_id  text NOT NULL,
    gpu        text NOT NULL,
    revision   integer NOT NULL,
    status     text NOT NULL,
    reason     text,
    body       jsonb NOT NULL,
    updated_at timestamptz NOT NULL
);
