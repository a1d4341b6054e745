-- Leases (docs/BILLING.md, "Leases"): one row per trade, its terms and where its billing
-- stands; the settlement loop picks running leases by next_due_at. FX rates as billing last
-- read them from fx.rates (units of EUR per unit of the currency).

CREATE TABLE leases (
    id                  text PRIMARY KEY,            -- the trade id
    order_id            text NOT NULL,
    offer_id            text NOT NULL,
    buyer_id            text NOT NULL,
    seller_id           text NOT NULL,
    gpu                 text NOT NULL,
    tier                text NOT NULL,
    gpus                integer NOT NULL CHECK (gpus > 0),
    price_micros        bigint NOT NULL CHECK (price_micros > 0),   -- per GPU-hour
    currency            text NOT NULL CHECK (currency IN ('EUR', 'USD', 'GBP')),
    wallet_currency     text NOT NULL CHECK (wallet_currency IN ('EUR', 'USD', 'GBP')),
    billing             text NOT NULL CHECK (billing IN ('hour', 'second')),
    hours               integer CHECK (hours > 0),
    settle_every_s      integer NOT NULL CHECK (settle_every_s > 0),
    started_at          timestamptz NOT NULL,
    ends_at             timestamptz,
    period              integer NOT NULL DEFAULT 0 CHECK (period >= 0),
    charged_through     timestamptz,
    charged_micros      bigint NOT NULL DEFAULT 0 CHECK (charged_micros >= 0),
    paid_micros         bigint NOT NULL DEFAULT 0 CHECK (paid_micros >= 0),
    fee_micros          bigint NOT NULL DEFAULT 0 CHECK (fee_micros >= 0),
    seller_micros       bigint NOT NULL DEFAULT 0 CHECK (seller_micros >= 0),
    held_micros         bigint NOT NULL DEFAULT 0 CHECK (held_micros >= 0),
    unpaid_micros       bigint NOT NULL DEFAULT 0 CHECK (unpaid_micros >= 0),
    warned              boolean NOT NULL DEFAULT false,
    ended_at            timestamptz,
    end_reason          text CHECK (end_reason IN ('stopped', 'completed', 'insufficient_funds')),
    next_due_at         timestamptz,                 -- null once ended
    CHECK (fee_micros + seller_micros = charged_micros),
    CHECK ((ended_at IS NULL) = (next_due_at IS NOT NULL)),
    CHECK ((ended_at IS NULL) = (end_reason IS NULL))
);
CREATE INDEX leases_due ON leases (next_due_at) WHERE next_due_at IS NOT NULL;
CREATE INDEX leases_order ON leases (order_id);

-- What of an order's hold its fills took into their leases' prepayments.
ALTER TABLE holds ADD COLUMN leased_gpus integer NOT NULL DEFAULT 0 CHECK (leased_gpus >= 0);

CREATE TABLE fx_rates (
    currency text PRIMARY KEY CHECK (currency IN ('USD', 'GBP')),
    rate     text NOT NULL,         -- units of EUR per unit of the currency, a decimal string
    as_of    timestamptz NOT NULL
);
