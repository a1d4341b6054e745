-- Capacity: an on-demand offer may also sell its GPUs as interruptible leases, at its own
-- interruptible price, with a notice. The body keeps the offer as accepted; these columns
-- keep what the books are read by: the interruptible price (as the seller priced it, like
-- the body's prices; NULL when none), the notice, and the tiers the offer is sold in
-- (domain.market.tiers_of: its on-demand and interruptible legs), which replace the body's
-- tier in finding an offer's books.
ALTER TABLE offers ADD COLUMN interruptible_price numeric;
ALTER TABLE offers ADD COLUMN interruption_notice_seconds integer NOT NULL DEFAULT 120
    CHECK (interruption_notice_seconds BETWEEN 120 AND 86400);
ALTER TABLE offers ADD COLUMN tiers text[];

UPDATE offers SET
    interruptible_price = (body->>'interruptible_price_per_gpu_hour')::numeric,
    interruption_notice_seconds = COALESCE((body->>'interruption_notice_seconds')::integer, 120);
UPDATE offers SET tiers = CASE
    WHEN body->>'tier' = 'on_demand' AND interruptible_price IS NOT NULL
        THEN ARRAY['on_demand', 'interruptible']
    ELSE ARRAY[body->>'tier']
END;
ALTER TABLE offers ALTER COLUMN tiers SET NOT NULL;

-- The books are found by (gpu) among the offers on the book (offers_live), then by tiers.
DROP INDEX offers_on_book;
