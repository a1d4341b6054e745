-- The lease's delivery lifecycle (docs/DELIVERY.md, "The lease's life"; docs/BILLING.md,
-- "Provisioning"): a lease whose offer has a provisioning timeout opens 'provisioning' with
-- its provisioning_deadline and is charged from ready_at, once its seller posted access; or
-- it ends 'failed' (failure: seller_reported / provisioning_timeout), nothing charged.
-- While it provisions, next_due_at is its deadline (or its interrupt_at, if sooner), so the
-- settlement loop finds it there. ready_at NULL: not ready (provisioning, or failed/ended
-- before it was). Existing rows were ready at their start: ready_at = started_at.

ALTER TABLE leases
    ADD COLUMN provisioning_deadline timestamptz,
    ADD COLUMN ready_at              timestamptz,
    ADD COLUMN failure               text CHECK (failure IN ('seller_reported', 'provisioning_timeout')),
    ADD COLUMN failure_detail        text NOT NULL DEFAULT '' CHECK (length(failure_detail) <= 500);

UPDATE leases SET ready_at = started_at;

-- A lease is ready (charged from ready_at) unless it has a provisioning deadline.
ALTER TABLE leases ADD CONSTRAINT leases_ready_or_provisioning
    CHECK (ready_at IS NOT NULL OR provisioning_deadline IS NOT NULL);
-- Nothing is charged before a lease is ready.
ALTER TABLE leases ADD CONSTRAINT leases_charged_once_ready
    CHECK (ready_at IS NOT NULL OR (period = 0 AND charged_micros = 0 AND paid_micros = 0));
-- Only a lease that never became ready fails, and only a failed one has a failure.
ALTER TABLE leases ADD CONSTRAINT leases_failed_never_ready
    CHECK (end_reason IS DISTINCT FROM 'failed' OR (ready_at IS NULL AND failure IS NOT NULL));
ALTER TABLE leases ADD CONSTRAINT leases_failure_is_failed
    CHECK (failure IS NULL OR end_reason IS NOT DISTINCT FROM 'failed');

ALTER TABLE leases DROP CONSTRAINT leases_end_reason_check;
ALTER TABLE leases ADD CONSTRAINT leases_end_reason_check
    CHECK (end_reason IN ('stopped', 'completed', 'insufficient_funds', 'interrupted', 'failed'));

-- Sellers' reports of leases whose trade billing has not applied yet (billing.commands may
-- overtake market.trades): kept once per lease (the first stands) and taken when the trade
-- opens the lease.
CREATE TABLE pending_lease_reports (
    lease_id    text PRIMARY KEY,
    buyer_id    text NOT NULL,
    seller_id   text NOT NULL,
    kind        text NOT NULL CHECK (kind IN ('ready', 'failed')),
    reported_at timestamptz NOT NULL,
    detail      text NOT NULL DEFAULT '' CHECK (length(detail) <= 500)
);
