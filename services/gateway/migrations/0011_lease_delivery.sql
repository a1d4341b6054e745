-- The lease's delivery (issue 15, docs/DELIVERY.md): the SSH keys a buyer names per order, the
-- lease's provisioning life in the parties' view, and the access details its seller hands over.

-- The buyer's SSH keys for an order's leases (ids of its ssh_keys; empty: all of them at the
-- time a lease opens). A re-buy keeps them.
ALTER TABLE orders
    ADD COLUMN ssh_key_ids text[] NOT NULL DEFAULT '{}'
        CHECK (cardinality(ssh_key_ids) <= 10);

-- A lease opened with a provisioning deadline is 'provisioning' until its lease.ready
-- (ready_at) makes it 'running'; a lease.ended with reason failed makes it 'failed' (with
-- failure: seller_reported / provisioning_timeout, and the seller's words). 'ended' and
-- 'failed' are final: the first end read stays.
ALTER TABLE leases DROP CONSTRAINT leases_status_check;
ALTER TABLE leases
    ADD CONSTRAINT leases_status_check
        CHECK (status IN ('provisioning', 'running', 'failed', 'ended')),
    ADD COLUMN provisioning_deadline timestamptz,
    ADD COLUMN ready_at              timestamptz,
    ADD COLUMN failure               text CHECK (failure IN ('seller_reported', 'provisioning_timeout')),
    ADD COLUMN failure_detail        text NOT NULL DEFAULT '';

-- The access details a lease's seller posted (POST /v1/leases/{id}/access), for its buyer only:
-- AES-256-GCM under the key key_id names (GPUX_ACCESS_KEYS), a random 12-byte nonce, the lease
-- id as associated data. Posting again replaces them. GPUX_ACCESS_RETENTION_S after the lease
-- ended or failed the timer erases key_id, nonce and ciphertext (erased_at set): the row stays
-- as the tombstone that answers 410.
CREATE TABLE lease_access (
    lease_id   text        PRIMARY KEY,
    buyer_id   text        NOT NULL,
    seller_id  text        NOT NULL,
    key_id     text,
    nonce      bytea       CHECK (length(nonce) = 12),
    ciphertext bytea,
    posted_at  timestamptz NOT NULL,
    erased_at  timestamptz,
    CHECK ((erased_at IS NULL) = (ciphertext IS NOT NULL AND nonce IS NOT NULL
                                  AND key_id IS NOT NULL))
);
CREATE INDEX lease_access_held ON lease_access (lease_id) WHERE erased_at IS NULL;

-- The seller's reports sent to billing (lease.ready_reported, lease.failure_reported): one of
-- each kind per lease, claimed in the transaction that queues it in the outbox.
CREATE TABLE lease_reports (
    lease_id    text        NOT NULL,
    kind        text        NOT NULL CHECK (kind IN ('ready', 'failure')),
    reported_at timestamptz NOT NULL,
    PRIMARY KEY (lease_id, kind)
);
