"""What the market resource reads: pricing's market data (kept in Redis by pricing)."""

from __future__ import annotations

from typing import Any, Protocol

from gpux_contracts.prices import BestAskChanged


class MarketDataRepository(Protocol):
    """Best asks and candles, as pricing publishes them (the price stream reads through
    ``streams.repository.PriceSource``)."""

    async def quotes(self) -> list[BestAskChanged]:
        """Every book's latest quote (every region), in key order."""
        ...

    async def gpu_quotes(self, gpu: str) -> list[BestAskChanged]:
        """The latest quotes of one GPU model."""
        ...

    async def candles(self, gpu: str, tier: str, interval: str) -> dict[str, Any] | None:
        """The latest candles of one book and interval, in every currency (None: no trades)."""
        ...
