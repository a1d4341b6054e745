"""Pricing's read models in Redis, written after the unit of work that changed them commits.

They follow PostgreSQL, never lead it: a write that fails is logged and left, and a restart
rebuilds them from PostgreSQL (``entrypoints.loops.rebuild_read_models``).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from redis.asyncio import Redis
from redis.asyncio.client import Pipeline
from redis.exceptions import RedisError

from gpux_contracts.prices import BestAskChanged
from gpux_platform.redis_keys import BEST_ASKS, CANDLES, PRICES_STREAM, PRICES_STREAM_MAX
from gpux_platform.settings import GpuxSettings
from gpux_pricing.domain.candles import Snapshot
from gpux_pricing.domain.quotes import key_of

log = logging.getLogger("gpux.pricing.read_models")


class RedisReadModels:
    """``prices:best`` (hash of the latest quotes), ``stream:prices``, ``prices:candles:*``."""

    def __init__(self, redis: Redis, settings: GpuxSettings) -> None:
        self._redis = redis
        self._settings = settings

    async def write_quotes(self, quotes: Sequence[BestAskChanged], *, stream: bool) -> None:
        """Keep the quotes readable; ``stream``: append them to the live price stream too."""
        if not quotes:
            return
        pipe = self._redis.pipeline(transaction=False)
        for quote in quotes:
            body = quote.model_dump_json()
            pipe.hset(self._settings.redis_key(BEST_ASKS), key_of(quote), body)
            if stream:
                pipe.xadd(
                    self._settings.redis_key(PRICES_STREAM),
                    {"data": body},
                    maxlen=PRICES_STREAM_MAX,
                    approximate=True,
                )
        await self._execute(pipe, "quotes", len(quotes))

    async def write_histories(self, snapshots: Sequence[Snapshot]) -> None:
        """Keep each book's latest candles and 24 h VWAP readable."""
        if not snapshots:
            return
        pipe = self._redis.pipeline(transaction=False)
        for history in snapshots:
            for interval, body in history.bodies.items():
                key = self._settings.redis_key(CANDLES, history.gpu, history.tier, interval.value)
                pipe.set(key, body)
        await self._execute(pipe, "histories", len(snapshots))

    async def _execute(self, pipe: Pipeline, what: str, count: int) -> None:
        try:
            await pipe.execute()
        except RedisError as exc:
            log.warning(
                "read model not written; it is rebuilt at the next start",
                extra={"what": what, "count": count, "error": repr(exc)},
            )
