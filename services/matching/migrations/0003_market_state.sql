-- market_state: the latest market session per scope ('*' = every GPU model, else a GPU id),
-- from the compacted market.sessions topic. No row means open. A funded order for a GPU is
-- rejected (market_halted) while its GPU's row or the '*' row says halted.
CREATE TABLE market_state (
    scope      text PRIMARY KEY,
    state      text NOT NULL CHECK (state IN ('open', 'halted')),
    reason     text,
    changed_at timestamptz NOT NULL
);
