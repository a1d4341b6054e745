-- Seller reliability (docs/DELIVERY.md): each seller's counts of leases ready in time, failed
-- and reclaimed, from billing.reliability, kept with the largest total (counts only grow:
-- gpux_contracts.reliability.supersedes). Quotes show them per best ask and depth level.
CREATE TABLE seller_reliability (
    seller_id     text PRIMARY KEY,
    ready_in_time bigint NOT NULL CHECK (ready_in_time >= 0),
    failed        bigint NOT NULL CHECK (failed >= 0),
    reclaimed     bigint NOT NULL CHECK (reclaimed >= 0)
);

-- A seller's open offers (closed ones never come back to a book): the books whose quotes a
-- change of its counts republishes.
CREATE INDEX offers_open_by_seller ON offers (seller_id)
    WHERE status NOT IN ('rejected', 'withdrawn', 'expired');
