-- Market history: every trade (price kept as traded and in EUR, the reference currency)
-- and the OHLC candles (1m, 1h, 1d, in EUR) they roll into.
CREATE TABLE trades (
    trade_id        text PRIMARY KEY,
    gpu             text NOT NULL,
    tier            text NOT NULL,
    gpus            integer NOT NULL CHECK (gpus > 0),
    price           numeric CHECK (price > 0),  -- EUR per GPU-hour; NULL when no rate was known
    traded_price    numeric NOT NULL CHECK (traded_price > 0),
    traded_currency text NOT NULL,
    executed_at     timestamptz NOT NULL
);
CREATE INDEX trades_by_book ON trades (gpu, tier, executed_at);

CREATE TABLE candles (
    gpu      text NOT NULL,
    tier     text NOT NULL,
    interval text NOT NULL CHECK (interval IN ('1m', '1h', '1d')),
    start    timestamptz NOT NULL,
    open     numeric NOT NULL,
    high     numeric NOT NULL,
    low      numeric NOT NULL,
    close    numeric NOT NULL,
    close_at timestamptz NOT NULL,  -- executed_at of the trade that set close
    gpus     bigint NOT NULL,
    notional numeric NOT NULL,      -- sum of price x gpus, EUR
    PRIMARY KEY (gpu, tier, interval, start)
);
