-- SSH public keys buyers register on their account (issue 15, access handoff). The key line is
-- stored as OpenSSH writes it (no comment); the fingerprint is unique per account.
CREATE TABLE ssh_keys (
    id          text        PRIMARY KEY,
    account_id  text        NOT NULL REFERENCES accounts (id),
    name        text        NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
    type        text        NOT NULL CHECK (type IN ('ed25519', 'ecdsa', 'rsa')),
    public_key  text        NOT NULL CHECK (length(public_key) <= 16384),
    fingerprint text        NOT NULL,
    bits        integer     CHECK (bits > 0),
    comment     text        NOT NULL CHECK (length(comment) <= 16384),
    created_at  timestamptz NOT NULL,
    UNIQUE (account_id, fingerprint)
);
CREATE INDEX ssh_keys_account ON ssh_keys (account_id, id);
