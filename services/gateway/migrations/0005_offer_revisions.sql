-- The revision of an offer the seller's view shows: 1 as submitted, then each change pricing
-- accepted (``offer.accepted`` on ``pricing.offers`` carries it); an older one is never taken.
ALTER TABLE offers ADD COLUMN revision integer NOT NULL DEFAULT 1 CHECK (revision >= 1);
