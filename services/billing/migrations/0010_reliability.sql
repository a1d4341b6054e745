-- Seller reliability (docs/BILLING.md, "Reliability"; docs/DELIVERY.md, "Seller reliability"):
-- billing counts, per offer and its seller, the leases that became ready in time, failed, or
-- were reclaimed by the seller, in the transaction that decided each outcome.
--
-- reliability_counted is what each lease has counted, once per kind: a redelivered event or a
-- settlement repeated after a crash finds its row and counts nothing more. reliability_counts
-- holds each offer's counts, written by the same statement as the rows it adds: an offer's
-- counts are its reliability_counted rows by kind. A seller's counts are the sum over its
-- offers (read, never stored). Counts only grow and an offer keeps its seller; the trigger
-- refuses anything else (SQLSTATE GX005). Function bodies name the schema because they run
-- under the caller's search_path.

CREATE TABLE reliability_counted (
    lease_id   text        NOT NULL,
    kind       text        NOT NULL CHECK (kind IN ('ready_in_time', 'failed', 'reclaimed')),
    offer_id   text        NOT NULL,
    seller_id  text        NOT NULL,
    counted_at timestamptz NOT NULL,
    PRIMARY KEY (lease_id, kind)
);

CREATE TABLE reliability_counts (
    offer_id      text        PRIMARY KEY,
    seller_id     text        NOT NULL,
    ready_in_time bigint      NOT NULL DEFAULT 0 CHECK (ready_in_time >= 0),
    failed        bigint      NOT NULL DEFAULT 0 CHECK (failed >= 0),
    reclaimed     bigint      NOT NULL DEFAULT 0 CHECK (reclaimed >= 0),
    updated_at    timestamptz NOT NULL
);
CREATE INDEX reliability_counts_seller ON reliability_counts (seller_id);

CREATE FUNCTION billing.reliability_counts_grow() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.seller_id <> OLD.seller_id OR NEW.ready_in_time < OLD.ready_in_time
       OR NEW.failed < OLD.failed OR NEW.reclaimed < OLD.reclaimed THEN
        RAISE EXCEPTION 'reliability counts of offer % only grow, for one seller', OLD.offer_id
            USING ERRCODE = 'GX005';
    END IF;
    RETURN NEW;
END
$$;
CREATE TRIGGER reliability_counts_grow BEFORE UPDATE ON reliability_counts
    FOR EACH ROW EXECUTE FUNCTION billing.reliability_counts_grow();

-- Counting in one round trip: the sellers' transaction-scoped advisory locks first, in key
-- order; then the outcomes not counted yet and their offers' counts raised by them (one
-- statement); then each given seller's counts over all its offers. Every offer of a seller is
-- counted under its lock, so units counting for one seller take turns; and in READ COMMITTED
-- each statement of a VOLATILE function takes a fresh snapshot, so the sums read after the
-- lock include what a unit counting for the same seller committed while this one waited.
-- Rows: one per outcome counted now, in the order given (its offer's counts after); then one
-- per seller (lease, offer and kind NULL: its counts over all its offers).
CREATE FUNCTION billing.reliability_count(
    p_lease_ids text[], p_offer_ids text[], p_seller_ids text[], p_kinds text[],
    p_at timestamptz)
RETURNS TABLE (lease_id text, offer_id text, seller_id text, kind text,
               ready_in_time bigint, failed bigint, reclaimed bigint)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
BEGIN
    PERFORM pg_advisory_xact_lock(hashtextextended('billing.reliability:' || s.id, 0))
       FROM (SELECT DISTINCT id FROM unnest(p_seller_ids) AS id ORDER BY id) AS s;
    RETURN QUERY
    WITH outcome AS (
        SELECT * FROM unnest(p_lease_ids, p_offer_ids, p_seller_ids, p_kinds) WITH ORDINALITY
               AS o (lease_id, offer_id, seller_id, kind, ord)
    ), counted AS (
        INSERT INTO billing.reliability_counted (lease_id, kind, offer_id, seller_id, counted_at)
        SELECT o.lease_id, o.kind, o.offer_id, o.seller_id, p_at FROM outcome o
        ON CONFLICT (lease_id, kind) DO NOTHING
        RETURNING lease_id, kind
    ), added AS (
        SELECT o.offer_id, min(o.seller_id) AS seller_id,
               count(*) FILTER (WHERE o.kind = 'ready_in_time') AS ready_in_time,
               count(*) FILTER (WHERE o.kind = 'failed') AS failed,
               count(*) FILTER (WHERE o.kind = 'reclaimed') AS reclaimed
          FROM outcome o JOIN counted c USING (lease_id, kind)
         GROUP BY o.offer_id
    ), offers AS (
        INSERT INTO billing.reliability_counts AS r
               (offer_id, seller_id, ready_in_time, failed, reclaimed, updated_at)
        SELECT a.offer_id, a.seller_id, a.ready_in_time, a.failed, a.reclaimed, p_at
          FROM added a
        ON CONFLICT (offer_id) DO UPDATE
           SET ready_in_time = r.ready_in_time + excluded.ready_in_time,
               failed = r.failed + excluded.failed,
               reclaimed = r.reclaimed + excluded.reclaimed,
               updated_at = excluded.updated_at
        RETURNING r.offer_id, r.ready_in_time, r.failed, r.reclaimed
    )
    SELECT o.lease_id, o.offer_id, o.seller_id, o.kind, f.ready_in_time, f.failed, f.reclaimed
      FROM outcome o
      JOIN counted c USING (lease_id, kind)
      JOIN offers f ON f.offer_id = o.offer_id
     ORDER BY o.ord;
    RETURN QUERY
    SELECT NULL::text, NULL::text, r.seller_id, NULL::text, sum(r.ready_in_time)::bigint,
           sum(r.failed)::bigint, sum(r.reclaimed)::bigint
      FROM billing.reliability_counts r
     WHERE r.seller_id = ANY(p_seller_ids)
     GROUP BY r.seller_id
     ORDER BY r.seller_id;
END
$$;
