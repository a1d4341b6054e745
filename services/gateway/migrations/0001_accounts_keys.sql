-- Accounts and their API keys. Keys are stored as HMAC-SHA256 digests, never in plain text.
CREATE TABLE accounts (
    id         text        PRIMARY KEY,
    name       text        NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
    roles      text[]      NOT NULL CHECK (cardinality(roles) >= 1),
    status     text        NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'suspended')),
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
);

CREATE TABLE api_keys (
    id          text        PRIMARY KEY,
    account_id  text        NOT NULL REFERENCES accounts (id),
    name        text        NOT NULL CHECK (length(name) <= 100),
    digest      bytea       NOT NULL,
    scopes      text[]      NOT NULL,
    created_at  timestamptz NOT NULL,
    revoked_at  timestamptz
);
CREATE INDEX api_keys_account ON api_keys (account_id, id);

-- Responses of creating requests, replayed for the same Idempotency-Key and body.
CREATE TABLE idempotency (
    scope        text        NOT NULL,
    key          text        NOT NULL,
    fingerprint  text        NOT NULL,
    status_code  integer     NOT NULL,
    body         json        NOT NULL,  -- json, not jsonb: replays must keep the bytes
    created_at   timestamptz NOT NULL,
    PRIMARY KEY (scope, key)
);
CREATE INDEX idempotency_created ON idempotency (created_at);
