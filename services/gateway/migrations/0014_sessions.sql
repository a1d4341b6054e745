-- Browser sessions (issue 17): signing in with an API key gives an HttpOnly cookie that
-- stands for that key. Only the HMAC digest of the session's secret is stored; a session is
-- revoked by its account (or ends with its key, or at expires_at).
CREATE TABLE sessions (
    id          text        PRIMARY KEY,
    account_id  text        NOT NULL REFERENCES accounts (id),
    key_id      text        NOT NULL REFERENCES api_keys (id),
    digest      bytea       NOT NULL,
    user_agent  text        NOT NULL DEFAULT '' CHECK (length(user_agent) <= 500),
    created_at  timestamptz NOT NULL,
    expires_at  timestamptz NOT NULL,
    revoked_at  timestamptz
);
CREATE INDEX sessions_account ON sessions (account_id, id);
CREATE INDEX sessions_expires ON sessions (expires_at);
