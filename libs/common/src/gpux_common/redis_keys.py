"""Redis keys shared between services (each prefixed with the namespace by the settings)."""

BEST_ASKS = "prices:best"
"""Hash: ``gpu|tier|region`` -> the latest ``BestAskChanged`` payload as JSON (pricing writes)."""

PRICES_STREAM = "stream:prices"
"""Stream of best-ask updates for server-sent events (pricing appends, the gateway reads)."""

PRICES_STREAM_MAX = 10_000
"""Approximate length the stream is trimmed to: how far back Last-Event-ID can resume."""

BALANCES = "balances"
"""Hash per account (``balances:<account id>``): currency -> ``BalanceChanged`` JSON (billing)."""
