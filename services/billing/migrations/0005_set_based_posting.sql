-- Posting a big batch (the settlement loop posts thousands of charges in one statement):
-- entries_posted() updates the cached balances in one set-based UPDATE instead of one UPDATE
-- per account. Same rules, same errors, same lock order: the touched accounts are first
-- locked in key order (byte order) and checked; when some account cannot take its change,
-- the first one in key order is reported exactly as before (GX003 when it does not exist,
-- else GX001 with its balance and the change); otherwise all are updated in one statement
-- (the balance floor CHECK on accounts stays as the last word). Joins are forced to nested loops
-- on the accounts' primary key, so the cost follows the batch, never the size of the ledger,
-- whatever plan is cached.
CREATE OR REPLACE FUNCTION billing.entries_posted() RETURNS trigger LANGUAGE plpgsql
SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off AS $$
DECLARE
    bad record;
BEGIN
    SELECT transfer_id INTO bad
      FROM new_entries
     GROUP BY transfer_id
    HAVING min(leg) <> 1
        OR max(leg) <> count(*)
        OR count(DISTINCT owner || '/' || currency || '/' || kind) <> count(*)
        OR count(DISTINCT currency) > 2
        OR (count(DISTINCT currency) = 2 AND count(*) FILTER (WHERE kind = 'fx_house') <> 2)
     LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'transfer %: entries must be legs 1..n on distinct accounts, in one'
            ' currency or two through the FX house', bad.transfer_id USING ERRCODE = 'GX003';
    END IF;

    SELECT transfer_id, currency, sum(amount_micros) AS total INTO bad
      FROM new_entries
     GROUP BY transfer_id, currency
    HAVING sum(amount_micros) <> 0
     LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'transfer % does not balance: % % micro-units', bad.transfer_id,
            bad.total, bad.currency USING ERRCODE = 'GX002';
    END IF;

    -- Key order: concurrent posters lock shared accounts in the same order (no deadlock).
    PERFORM 1
       FROM (SELECT DISTINCT owner, currency, kind FROM new_entries) c
       JOIN billing.accounts a
         ON (a.owner, a.currency, a.kind) = (c.owner, c.currency, c.kind)
      ORDER BY a.owner COLLATE "C", a.currency COLLATE "C", a.kind COLLATE "C"
        FOR UPDATE OF a;

    -- With the accounts locked, the first one (key order) that is missing or would go
    -- below its floor is the one the refusal names.
    SELECT c.owner, c.currency, c.kind, c.delta, a.balance_micros, a.owner IS NULL AS missing
      INTO bad
      FROM (SELECT owner, currency, kind, sum(amount_micros)::bigint AS delta
              FROM new_entries GROUP BY owner, currency, kind) c
      LEFT JOIN billing.accounts a
        ON (a.owner, a.currency, a.kind) = (c.owner, c.currency, c.kind)
     WHERE a.owner IS NULL
        OR (a.balance_micros + c.delta < 0
            AND a.kind NOT IN ('platform_revenue', 'fx_house', 'topup_clearing'))
     ORDER BY c.owner COLLATE "C", c.currency COLLATE "C", c.kind COLLATE "C"
     LIMIT 1;
    IF FOUND THEN
        IF bad.missing THEN
            RAISE EXCEPTION 'no account %/%/%', bad.owner, bad.currency, bad.kind
                USING ERRCODE = 'GX003';
        END IF;
        RAISE EXCEPTION 'insufficient funds in %/%/%', bad.owner, bad.currency, bad.kind
            USING ERRCODE = 'GX001',
                  DETAIL = json_build_object('owner', bad.owner, 'currency', bad.currency,
                                             'kind', bad.kind, 'balance_micros', bad.balance_micros,
                                             'delta_micros', bad.delta)::text;
    END IF;

    UPDATE billing.accounts a
       SET balance_micros = a.balance_micros + c.delta
      FROM (SELECT owner, currency, kind, sum(amount_micros)::bigint AS delta
              FROM new_entries GROUP BY owner, currency, kind) c
     WHERE (a.owner, a.currency, a.kind) = (c.owner, c.currency, c.kind);
    RETURN NULL;
END
$$;
