-- The book is kept per partition of its co-partitioned input topics (pricing.offers and
-- orders.book, both keyed by GPU id): each partition has its own command log, snapshots and
-- log head. seq stays one global bigserial, so command ids and book-level sequences remain
-- unique and increase within a partition. partition -1: logged by the single engine that ran
-- before partitions; a partition without a log of its own starts from that legacy state,
-- filtered to its GPUs (gpux_matching.partition).
ALTER TABLE commands ADD COLUMN partition integer NOT NULL DEFAULT -1;
ALTER TABLE commands ALTER COLUMN partition DROP DEFAULT;
CREATE INDEX commands_partition_seq ON commands (partition, seq);

ALTER TABLE snapshots ADD COLUMN partition integer NOT NULL DEFAULT -1;
ALTER TABLE snapshots ALTER COLUMN partition DROP DEFAULT;
ALTER TABLE snapshots DROP CONSTRAINT snapshots_pkey;
ALTER TABLE snapshots ADD PRIMARY KEY (partition, seq);

-- heads: the last command logged per partition. Every command transaction locks its
-- partition's row (SELECT ... FOR UPDATE) and checks it against the head its engine reflects,
-- so an instance that lost the partition in a rebalance (and has not noticed yet) can never
-- log over the new owner: its transaction sees a newer head, rolls back and rebuilds.
CREATE TABLE heads (
    partition integer PRIMARY KEY,
    seq       bigint NOT NULL
);
