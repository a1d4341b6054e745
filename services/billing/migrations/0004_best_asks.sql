-- The market's best asks as billing last read them from pricing.best-asks: a market order
-- without a cap is held at the best ask plus the slippage cap (docs/BILLING.md, "Holds").

CREATE TABLE best_asks (
    gpu     text NOT NULL,
    tier    text NOT NULL,
    region  text NOT NULL,
    prices  jsonb,                  -- currency -> decimal string; null: nothing offered
    as_of   timestamptz NOT NULL,
    PRIMARY KEY (gpu, tier, region)
);
