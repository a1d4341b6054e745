-- Set aside: consumed events that failed alone, again and again (after their batch was split
-- down to them). Claimed in the inbox in the same transaction, so they are not retried; kept
-- here whole with the error, for a person to look at (and replay by hand once fixed).
CREATE TABLE set_aside (
    event_id   text        PRIMARY KEY,
    topic      text        NOT NULL,
    body       bytea       NOT NULL,
    error      text        NOT NULL,
    set_at     timestamptz NOT NULL DEFAULT now()
);
