"""Redis keys shared between services (each prefixed with the namespace by the settings)."""

BEST_ASKS = "prices:best"
"""Hash: ``gpu|tier|region`` -> the latest ``BestAskChanged`` payload as JSON (pricing writes)."""

PRICES_STREAM = "stream:prices"
"""Stream of best-ask updates for server-sent events (pricing appends, the gateway reads)."""

PRICES_STREAM_MAX = 10_000
"""Approximate length the stream is trimmed to: how far back Last-Event-ID can resume."""

BALANCES = "balances"
"""Hash per account (``balances:<account id>``): currency -> ``BalanceChanged`` JSON (billing)."""

CANDLES = "prices:candles"
"""String per book and interval (``prices:candles:<gpu>:<tier>:<interval>``): JSON with the
latest 200 OHLC candles and the 24 h volume-weighted price, in every currency (pricing)."""

PRICING_READ_MODELS = "pricing:read-models"
"""String pricing sets once its read models (``prices:best``, ``prices:candles:*``) are rebuilt
from PostgreSQL. Gone means Redis lost them (restarted empty, flushed): pricing rebuilds them."""

BILLING_READ_MODELS = "billing:read-models"
"""String billing sets once the balances (``balances:*``) are rebuilt from PostgreSQL. Gone means
Redis lost them (restarted empty, flushed): billing rebuilds them."""
