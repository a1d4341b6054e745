-- Seller payouts (docs/BILLING.md, "Payouts"; docs/DELIVERY.md, "Payouts").
--
-- Two account kinds: payouts_in_transit (a seller's payouts taken from its seller_payable and
-- not yet confirmed paid; owned by the seller, floored at zero, so a payout can never be paid
-- twice) and paid_out (the platform's, one per currency: money paid out of gpux; it only ever
-- grows, and the floor holds it too). The posting trigger (0005) floors every kind but
-- platform_revenue, fx_house and topup_clearing, so it needs no change. One transfer kind:
-- payout_paid (payouts_in_transit -> paid_out); payout (seller_payable -> payouts_in_transit)
-- was reserved from the start.

ALTER TABLE accounts DROP CONSTRAINT accounts_kind_check;
ALTER TABLE accounts ADD CONSTRAINT accounts_kind_check CHECK (
    kind IN ('available', 'held', 'seller_payable', 'platform_revenue', 'fx_house',
             'topup_clearing', 'payouts_in_transit', 'paid_out'));
ALTER TABLE accounts DROP CONSTRAINT accounts_owner_kind;
ALTER TABLE accounts ADD CONSTRAINT accounts_owner_kind CHECK (
    (owner = 'platform') = (kind IN ('platform_revenue', 'fx_house', 'topup_clearing', 'paid_out')));

ALTER TABLE transfers DROP CONSTRAINT transfers_kind_check;
ALTER TABLE transfers ADD CONSTRAINT transfers_kind_check CHECK (
    kind IN ('topup', 'hold', 'release', 'charge', 'fee', 'payout', 'payout_paid', 'fx',
             'correction'));

-- One row per payout id: a request billing decided (pending or rejected), then its
-- confirmation (paid) or the admin's rejection. The transfers are payout:<id> and
-- payout-paid:<id> (payout-returned:<id> when the admin rejects a pending payout).
CREATE TABLE payouts (
    id            text        PRIMARY KEY,
    seller_id     text        NOT NULL,
    currency      text        NOT NULL CHECK (currency IN ('EUR', 'USD', 'GBP')),
    amount_micros bigint      NOT NULL,
    method        text        NOT NULL CHECK (method IN ('manual')),
    destination   text        NOT NULL CHECK (length(destination) <= 200),
    status        text        NOT NULL CHECK (status IN ('pending', 'paid', 'rejected')),
    reason        text,
    reference     text        NOT NULL DEFAULT '' CHECK (length(reference) <= 200),
    decided_by    text,
    requested_at  timestamptz NOT NULL,
    updated_at    timestamptz NOT NULL,
    CONSTRAINT payouts_rejected_reason CHECK ((status = 'rejected') = (reason IS NOT NULL))
);
CREATE INDEX payouts_seller ON payouts (seller_id, id);
