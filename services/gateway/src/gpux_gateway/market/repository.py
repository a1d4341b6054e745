"""What the market resource reads: pricing's market data (kept in Redis by pricing)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, Protocol

from gpux_contracts.prices import BestAskChanged


class MarketDataRepository(Protocol):
    """Best asks, candles and the stream of price updates, as pricing publishes them."""

    async def quotes(self) -> list[BestAskChanged]:
        """Every book's latest quote (every region), in key order."""
        ...

    async def gpu_quotes(self, gpu: str) -> list[BestAskChanged]:
        """The latest quotes of one GPU model."""
        ...

    async def candles(self, gpu: str, tier: str, interval: str) -> dict[str, Any] | None:
        """The latest candles of one book and interval, in every currency (None: no trades)."""
        ...

    async def price_entries_up_to(self, end: str, count: int) -> list[tuple[str, str]]:
        """Up to ``count`` (entry id, JSON data) up to the entry ``end`` included (``$``: the
        newest), newest first."""
        ...

    def price_updates(self, start: str, block_ms: int) -> AsyncIterator[tuple[str, str]]:
        """(entry id, JSON data) of each best-ask update after the entry ``start``, forever."""
        ...
