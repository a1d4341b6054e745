-- Interruptions (docs/BILLING.md, "Interruptions"; docs/CAPACITY.md, "Billing"): the book's
-- interruption of a running interruptible lease, kept on its row once. The lease is due at
-- interrupt_at at the latest (next_due_at) and ends there with the reason 'interrupted'.
-- Nullable columns without a default: adding them rewrites nothing.

ALTER TABLE leases
    ADD COLUMN interrupt_at            timestamptz,
    ADD COLUMN interruption_cause      text CHECK (interruption_cause IN ('preempted', 'reclaimed')),
    ADD COLUMN interruption_noticed_at timestamptz,
    ADD CONSTRAINT leases_interruption_whole CHECK (
        (interrupt_at IS NULL) = (interruption_cause IS NULL)
        AND (interrupt_at IS NULL) = (interruption_noticed_at IS NULL)
    );

ALTER TABLE leases DROP CONSTRAINT leases_end_reason_check;
ALTER TABLE leases ADD CONSTRAINT leases_end_reason_check
    CHECK (end_reason IN ('stopped', 'completed', 'insufficient_funds', 'interrupted'));
-- Only an interrupted lease ends 'interrupted'.
ALTER TABLE leases ADD CONSTRAINT leases_interrupted_had_an_interruption
    CHECK (end_reason IS DISTINCT FROM 'interrupted' OR interrupt_at IS NOT NULL);
