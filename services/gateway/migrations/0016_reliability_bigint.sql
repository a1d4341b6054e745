-- Reliability counts are bigint, as billing counts them (billing.reliability_counts): 0015
-- made them integer, and a count past 2^31 - 1 would refuse the batch that carries it.
-- 0015 stays as it was applied (the runner refuses an edited migration); the CHECKs follow
-- their columns.
ALTER TABLE offer_reliability
    ALTER COLUMN ready_in_time TYPE bigint,
    ALTER COLUMN failed        TYPE bigint,
    ALTER COLUMN reclaimed     TYPE bigint;

ALTER TABLE seller_reliability
    ALTER COLUMN ready_in_time TYPE bigint,
    ALTER COLUMN failed        TYPE bigint,
    ALTER COLUMN reclaimed     TYPE bigint;
