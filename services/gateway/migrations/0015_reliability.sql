-- Seller reliability (issue 15, docs/DELIVERY.md "Seller reliability"): billing's counts of
-- leases ready in time, failed and reclaimed, per offer and per seller, as reliability.changed
-- (billing.reliability, group gateway.reliability) last carried them. Counts only grow, so a
-- row is replaced only by counts of at least its total (gpux_contracts.reliability.supersedes):
-- a replay, or a seller's events read out of order across partitions, never steps it back.
-- An offer or a seller without a row has nothing counted (zeros, no rate).
CREATE TABLE offer_reliability (
    offer_id      text        PRIMARY KEY,
    seller_id     text        NOT NULL,
    ready_in_time integer     NOT NULL CHECK (ready_in_time >= 0),
    failed        integer     NOT NULL CHECK (failed >= 0),
    reclaimed     integer     NOT NULL CHECK (reclaimed >= 0),
    as_of         timestamptz NOT NULL
);
CREATE INDEX offer_reliability_seller ON offer_reliability (seller_id, offer_id);

CREATE TABLE seller_reliability (
    seller_id     text        PRIMARY KEY,
    ready_in_time integer     NOT NULL CHECK (ready_in_time >= 0),
    failed        integer     NOT NULL CHECK (failed >= 0),
    reclaimed     integer     NOT NULL CHECK (reclaimed >= 0),
    as_of         timestamptz NOT NULL
);

-- An order's min_reliability in basis points (0..10,000 for 0..1 at four places; null: any
-- seller), as its order.placed carries it. A re-buy keeps its order's.
ALTER TABLE orders
    ADD COLUMN min_reliability_bp integer CHECK (min_reliability_bp BETWEEN 0 AND 10000);
