-- Pending interruptions (docs/BILLING.md, "Interruptions"): the book's interruption of a lease
-- whose trade billing has not applied yet (market.trades is read by another consumer and may
-- lag billing.commands). Kept once per lease (the first decision stands) and taken when the
-- trade opens the lease, which then opens with its interrupt_at set.

CREATE TABLE pending_interruptions (
    lease_id     text PRIMARY KEY,
    buyer_id     text NOT NULL,
    offer_id     text NOT NULL,
    seller_id    text NOT NULL,
    cause        text NOT NULL CHECK (cause IN ('preempted', 'reclaimed')),
    noticed_at   timestamptz NOT NULL,
    interrupt_at timestamptz NOT NULL
);
