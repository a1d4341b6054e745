"""The market data pricing keeps in Redis: best asks, candles and the stream of price updates."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from redis.asyncio import Redis

from gpux_contracts.prices import BestAskChanged
from gpux_platform.redis_keys import BEST_ASKS, CANDLES, PRICES_STREAM
from gpux_platform.settings import GpuxSettings


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
        return [(entry_id.decode(), _data(fields)) for entry_id, fields in entries]

    async def price_updates(self, start: str, block_ms: int) -> AsyncIterator[tuple[str, str]]:
        """Best-ask updates after the stream entry ``start`` (``$``: from now), forever.

        Yields (entry id, JSON data); the entry id is what a client resumes from.
        """
        key = self._settings.redis_key(PRICES_STREAM)
        redis: Any = self._redis  # redis-py's stream replies are loosely typed
        cursor = start
        if cursor == "$":
            # Resolve "now" once, so entries added between reads are not skipped.
            last = await redis.xrevrange(key, count=1)
            cursor = last[0][0].decode() if last else "0-0"
        while True:
            batches = await redis.xread({key: cursor}, block=block_ms, count=100)
            for _, entries in batches:
                for entry_id, fields in entries:
                    cursor = entry_id.decode()
                    yield cursor, _data(fields)


def _data(fields: dict[bytes, bytes]) -> str:
    return fields.get(b"data", b"{}").decode()
