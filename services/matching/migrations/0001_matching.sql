-- The matching engine lives in memory; these tables are what it is rebuilt from.
-- commands: every command applied, in order (written in the transaction of its input's
-- inbox claim and its outbox events). snapshots: the engine's whole state after a command.
-- offers: who owns each offer the book was given (status events name seller and GPU).
CREATE TABLE commands (
    seq  bigserial PRIMARY KEY,
    kind text NOT NULL,
    body jsonb NOT NULL
);

CREATE TABLE snapshots (
    seq        bigint PRIMARY KEY,
    body       jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE offers (
    offer_id  text PRIMARY KEY,
    seller_id text NOT NULL,
    gpu       text NOT NULL,
    revision  integer NOT NULL
);
