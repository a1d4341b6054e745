-- Sellers' payouts (docs/DELIVERY.md, "Payouts"; docs/API.md, "Payouts"). A row is written
-- when the seller asks (pending_request, with the payout.requested command in the same
-- transaction); billing's payout.status_changed (billing.payouts) moves it on: pending, then
-- paid or rejected. A status never goes back (rank: pending_request < pending < paid,
-- rejected), so a replayed or late event changes nothing.
CREATE TABLE payouts (
    id            text        PRIMARY KEY,
    seller_id     text        NOT NULL REFERENCES accounts (id),
    currency      text        NOT NULL CHECK (currency IN ('EUR', 'USD', 'GBP')),
    amount_micros bigint      NOT NULL CHECK (amount_micros > 0),
    method        text        NOT NULL CHECK (method IN ('manual')),
    destination   text        NOT NULL CHECK (length(destination) BETWEEN 1 AND 200),
    status        text        NOT NULL
                              CHECK (status IN ('pending_request', 'pending', 'paid', 'rejected')),
    reason        text,
    reference     text        NOT NULL DEFAULT '',
    created_at    timestamptz NOT NULL,
    updated_at    timestamptz NOT NULL
);
CREATE INDEX payouts_seller ON payouts (seller_id, id);
