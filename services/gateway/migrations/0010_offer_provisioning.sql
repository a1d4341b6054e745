-- Delivery (docs/DELIVERY.md): an offer states how long after a lease starts its seller has
-- to post the lease's access before the lease fails. 0 means the machines are ready at the
-- lease's start (charged from then), as every offer was before: existing rows get 0.
ALTER TABLE offers
    ADD COLUMN provisioning_timeout_seconds integer NOT NULL DEFAULT 0
        CHECK (provisioning_timeout_seconds = 0
               OR provisioning_timeout_seconds BETWEEN 60 AND 86400);
