-- The double-entry ledger (docs/BILLING.md; invariants in docs/INVARIANTS.md, "Billing ledger").
-- Amounts are signed integer micro-units: + adds to the account's balance, - takes from it.
--
-- The database itself refuses what the domain already refuses, so a bug or a raw INSERT
-- cannot corrupt the ledger: a transfer's entries balance per currency and are all inserted
-- with it (legs 1..n, by one statement); transfers and entries are never updated or deleted;
-- cached balances change only through posted entries; available, held and seller_payable
-- balances never go below zero.
--
-- The trigger reads only the statement's new rows and updates accounts by primary key, in
-- key order: its cost follows the batch, never the size of the ledger, whatever plan is
-- cached. Function bodies name the schema because they run under the caller's search_path.
--
-- SQLSTATEs of our own (class GX):
--   GX001 insufficient funds (DETAIL: JSON owner, currency, kind, balance_micros, delta_micros)
--   GX002 a transfer does not balance in a currency
--   GX003 a transfer's entries are malformed (legs, repeated account, currencies, FX house)
--         or name an account that does not exist
--   GX004 the ledger is append-only (UPDATE/DELETE/TRUNCATE refused)

CREATE TABLE accounts (
    owner          text   NOT NULL CHECK (owner ~ '^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$'),
    currency       text   NOT NULL CHECK (currency IN ('EUR', 'USD', 'GBP')),
    kind           text   NOT NULL CHECK (kind IN ('available', 'held', 'seller_payable',
                                                   'platform_revenue', 'fx_house', 'topup_clearing')),
    -- The cached balance: the sum of this account's entries, kept by entries_posted().
    balance_micros bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (owner, currency, kind),
    CONSTRAINT accounts_owner_kind CHECK (
        (owner = 'platform') = (kind IN ('platform_revenue', 'fx_house', 'topup_clearing'))),
    CONSTRAINT accounts_balance_floor CHECK (
        balance_micros >= 0 OR kind IN ('platform_revenue', 'fx_house', 'topup_clearing'))
);

CREATE TABLE transfers (
    id          text        PRIMARY KEY CHECK (id ~ '^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$'),
    kind        text        NOT NULL CHECK (kind IN ('topup', 'hold', 'release', 'charge', 'fee',
                                                     'payout', 'fx', 'correction')),
    created_at  timestamptz NOT NULL,  -- given by the caller: the domain reads no clock
    reference   text        NOT NULL DEFAULT ''
                            CHECK (length(reference) <= 200 AND reference !~ '[[:cntrl:]]'),
    fx_base     text        CHECK (fx_base IN ('EUR', 'USD', 'GBP')),
    fx_quote    text        CHECK (fx_quote IN ('EUR', 'USD', 'GBP')),
    fx_rate     text        CHECK (CASE WHEN fx_rate IS NULL THEN true
                                        WHEN fx_rate ~ '^[0-9]+(\.[0-9]+)?$' THEN fx_rate::numeric > 0
                                        ELSE false END),
    fx_rate_at  timestamptz,
    -- Always 1: with transfers_have_entries it makes a transfer without its first leg fail.
    first_leg   smallint    NOT NULL DEFAULT 1 CHECK (first_leg = 1),
    posted_at   timestamptz NOT NULL DEFAULT now(),  -- audit only, not part of the identity
    CONSTRAINT transfers_fx_complete CHECK (num_nulls(fx_base, fx_quote, fx_rate, fx_rate_at) IN (0, 4)),
    CONSTRAINT transfers_fx_pair CHECK (fx_base <> fx_quote)
);

CREATE TABLE entries (
    seq           bigint   GENERATED ALWAYS AS IDENTITY PRIMARY KEY,  -- posting order; statement cursor
    transfer_id   text     NOT NULL REFERENCES transfers (id),
    leg           smallint NOT NULL CHECK (leg BETWEEN 1 AND 32),     -- 1..n within its transfer
    owner         text     NOT NULL,
    currency      text     NOT NULL,
    kind          text     NOT NULL,
    amount_micros bigint   NOT NULL
                           CHECK (amount_micros <> 0 AND abs(amount_micros) <= 1000000000000000),
    -- No foreign key to accounts: entries_posted() updates every account an entry names
    -- and refuses one that does not exist (one lookup instead of two per entry).
    CONSTRAINT entries_leg UNIQUE (transfer_id, leg)
);
CREATE INDEX entries_statement ON entries (owner, currency, seq);

-- Both foreign keys are checked at the end of the inserting statement, so a transfer and its
-- entries go in together (one statement), and a transfer never exists without entries.
ALTER TABLE transfers ADD CONSTRAINT transfers_have_entries
    FOREIGN KEY (id, first_leg) REFERENCES entries (transfer_id, leg);

-- After every INSERT statement on entries. Legs 1..n in one statement with leg 1 unique per
-- transfer means entries can never be added to a transfer later.
CREATE FUNCTION billing.entries_posted() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    bad record;
    change record;
    balance bigint;
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

    -- Key order (byte order, as the domain sorts): concurrent posters lock shared accounts
    -- in the same order, so they cannot deadlock, and the first short account is the same
    -- one the reference ledger reports.
    FOR change IN
        SELECT owner, currency, kind, sum(amount_micros)::bigint AS delta
          FROM new_entries
         GROUP BY owner, currency, kind
         ORDER BY owner COLLATE "C", currency COLLATE "C", kind COLLATE "C"
    LOOP
        UPDATE billing.accounts a
           SET balance_micros = a.balance_micros + change.delta
         WHERE (a.owner, a.currency, a.kind) = (change.owner, change.currency, change.kind)
           AND (a.balance_micros + change.delta >= 0
                OR a.kind IN ('platform_revenue', 'fx_house', 'topup_clearing'));
        IF NOT FOUND THEN
            SELECT a.balance_micros INTO balance FROM billing.accounts a
             WHERE (a.owner, a.currency, a.kind) = (change.owner, change.currency, change.kind);
            IF NOT FOUND THEN
                RAISE EXCEPTION 'no account %/%/%', change.owner, change.currency, change.kind
                    USING ERRCODE = 'GX003';
            END IF;
            RAISE EXCEPTION 'insufficient funds in %/%/%', change.owner, change.currency, change.kind
                USING ERRCODE = 'GX001',
                      DETAIL = json_build_object('owner', change.owner, 'currency', change.currency,
                                                 'kind', change.kind, 'balance_micros', balance,
                                                 'delta_micros', change.delta)::text;
        END IF;
    END LOOP;
    RETURN NULL;
END
$$;
CREATE TRIGGER entries_posted AFTER INSERT ON entries
    REFERENCING NEW TABLE AS new_entries
    FOR EACH STATEMENT EXECUTE FUNCTION billing.entries_posted();

-- Append-only: no UPDATE, DELETE or TRUNCATE of transfers or entries (corrections are new
-- transfers). Accounts are never deleted and are updated only by entries_posted(), one
-- trigger level down.
CREATE FUNCTION billing.ledger_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_TABLE_NAME = 'accounts' AND TG_OP = 'UPDATE' AND pg_trigger_depth() > 1 THEN
        RETURN NULL;
    END IF;
    RAISE EXCEPTION '% on billing.% is refused: the ledger is append-only (post a correction)',
        TG_OP, TG_TABLE_NAME USING ERRCODE = 'GX004';
END
$$;
CREATE TRIGGER transfers_immutable BEFORE UPDATE OR DELETE OR TRUNCATE ON transfers
    FOR EACH STATEMENT EXECUTE FUNCTION billing.ledger_immutable();
CREATE TRIGGER entries_immutable BEFORE UPDATE OR DELETE OR TRUNCATE ON entries
    FOR EACH STATEMENT EXECUTE FUNCTION billing.ledger_immutable();
CREATE TRIGGER accounts_guarded BEFORE UPDATE OR DELETE OR TRUNCATE ON accounts
    FOR EACH STATEMENT EXECUTE FUNCTION billing.ledger_immutable();
