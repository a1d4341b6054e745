-- Capacity (docs/CAPACITY.md): offers are pools sold in two tiers, leases are interrupted with
-- notice, and an order may be bought again when one of its leases is interrupted.

-- An offer's interruptible price (on-demand offers only; null: one tier), its notice, and the
-- capacity and leased GPUs the book last reported (null until it does: the view shows the
-- offer's gpus and gpus - remaining then).
ALTER TABLE offers
    ADD COLUMN interruptible_price_micros  bigint  CHECK (interruptible_price_micros > 0),
    ADD COLUMN interruption_notice_seconds integer NOT NULL DEFAULT 120
        CHECK (interruption_notice_seconds BETWEEN 120 AND 86400),
    ADD COLUMN capacity_gpus               integer CHECK (capacity_gpus >= 0),
    ADD COLUMN leased_gpus                 integer CHECK (leased_gpus >= 0);

-- What a re-buy repeats of an order: the wallet it pays from (null: its currency), whether
-- max_price_micros is the cap billing funded a market order at rather than the buyer's own
-- (the re-buy then goes uncapped, as the buyer asked), and the re-buy itself.
ALTER TABLE orders
    ADD COLUMN wallet_currency       text    CHECK (wallet_currency IN ('EUR', 'USD', 'GBP')),
    ADD COLUMN cap_from_billing      boolean NOT NULL DEFAULT false,
    ADD COLUMN rebuy_on_interruption boolean NOT NULL DEFAULT false,
    ADD COLUMN rebuy_of              text;

-- The offer a fill took, and when its lease starts when that is after the trade (a preempting
-- on-demand trade starts at the interrupted lease's interrupt_at).
ALTER TABLE order_fills
    ADD COLUMN offer_id  text,
    ADD COLUMN starts_at timestamptz;

-- An interruption notice (lease.interruption_notice): the first one read stays. A notice read
-- before any other event of its lease makes the row, without a wallet currency yet.
ALTER TABLE leases
    ALTER COLUMN wallet_currency DROP NOT NULL,
    ADD COLUMN interrupt_at            timestamptz,
    ADD COLUMN interruption_cause      text CHECK (interruption_cause IN ('preempted', 'reclaimed')),
    ADD COLUMN interruption_noticed_at timestamptz;
