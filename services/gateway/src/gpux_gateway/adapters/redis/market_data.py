"""The market data pricing keeps in Redis: best asks, candles and the stream of price updates."""

from __future__ import annotations

import json
from typing import Any

from redis.asyncio import Redis

from gpux_contracts.prices import BestAskChanged
from gpux_platform.redis_keys import BEST_ASKS, CANDLES, PRICES_STREAM
from gpux_platform.settings import GpuxSettings

READ_COUNT = 500
"""How many entries one read of the price stream takes at most."""


class MarketData:
    """Reads pricing's Redis read models (namespaced by the settings)."""

    def __init__(self, redis: Redis, settings: GpuxSettings) -> None:
        self._redis = redis
        self._settings = settings

    async def quotes(self) -> list[BestAskChanged]:
        """Every book's latest quote (every region), in key order."""
        raw = await self._redis.hgetall(self._settings.redis_key(BEST_ASKS))
        return [BestAskChanged.model_validate_json(raw[k]) for k in sorted(raw)]

    async def gpu_quotes(self, gpu: str) -> list[BestAskChanged]:
        """The latest quotes of one GPU model."""
        return [q for q in await self.quotes() if q.gpu == gpu]

    async def candles(self, gpu: str, tier: str, interval: str) -> dict[str, Any] | None:
        """The latest candles of one book and interval, in every currency (None: no trades)."""
        body = await self._redis.get(self._settings.redis_key(CANDLES, gpu, tier, interval))
        return None if body is None else dict(json.loads(body))

    async def price_entries_up_to(self, end: str, count: int) -> list[tuple[str, str]]:
        """Up to ``count`` stream entries up to ``end`` included (``$``: the newest), newest
        first: (entry id, JSON data)."""
        redis: Any = self._redis  # redis-py's stream replies are loosely typed
        entries = await redis.xrevrange(
            self._settings.redis_key(PRICES_STREAM), max="+" if end == "$" else end, count=count
        )
        return _entries(entries)

    async def price_entries_after(self, start: str, count: int) -> list[tuple[str, str]]:
        """Up to ``count`` stream entries after ``start`` (excluded), oldest first."""
        redis: Any = self._redis
        entries = await redis.xrange(
            self._settings.redis_key(PRICES_STREAM), min=f"({start}", count=count
        )
        return _entries(entries)

    async def read_prices(self, after: str, block_ms: int) -> list[tuple[str, str]]:
        """The entries after ``after`` (up to ``READ_COUNT``), oldest first: one ``XREAD``
        that waits up to ``block_ms`` for the first."""
        redis: Any = self._redis
        key = self._settings.redis_key(PRICES_STREAM)
        batches = await redis.xread({key: after}, block=block_ms, count=READ_COUNT)
        return [entry for _, entries in batches for entry in _entries(entries)]


def _entries(entries: list[tuple[bytes, dict[bytes, bytes]]]) -> list[tuple[str, str]]:
    return [(entry_id.decode(), _data(fields)) for entry_id, fields in entries]


def _data(fields: dict[bytes, bytes]) -> str:
    return fields.get(b"data", b"{}").decode()
