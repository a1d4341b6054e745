-- Inbox: the ids of consumed events, written in the same transaction as their effect,
-- so a redelivered event is recognised and skipped (exactly-once effect).
CREATE TABLE inbox (
    event_id     text        PRIMARY KEY,
    topic        text        NOT NULL,
    processed_at timestamptz NOT NULL DEFAULT now()
);
