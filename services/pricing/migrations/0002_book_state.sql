-- The book's view of each accepted offer, as matching reports it: live GPUs remaining.
ALTER TABLE offers ADD COLUMN remaining integer NOT NULL DEFAULT 0;
ALTER TABLE offers ADD COLUMN on_book boolean NOT NULL DEFAULT false;
CREATE INDEX offers_live ON offers (gpu) WHERE on_book;
