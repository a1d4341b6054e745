"""Pricing's read models in Redis, written after the unit of work that changed them commits.

They follow PostgreSQL, never lead it: a write that fails is logged, counted and left, and
they are rebuilt from PostgreSQL (``entrypoints.loops.rebuild_read_models``) at start and
whenever they may have lost a write since the last rebuild: one failed, or Redis restarted
empty (the key ``pricing:read-models`` the rebuild leaves is gone); ``entrypoints.loops.
watch_read_models`` checks every ``GPUX_READ_MODELS_CHECK_S``.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from redis.asyncio import Redis
from redis.asyncio.client import Pipeline
from redis.exceptions import RedisError

from gpux_contracts.prices import BestAskChanged
from gpux_platform.redis_keys import (
    BEST_ASKS,
    CANDLES,
    PRICES_STREAM,
    PRICES_STREAM_MAX,
    PRICING_READ_MODELS,
)
from gpux_platform.settings import GpuxSettings
from gpux_pricing.domain.candles import Snapshot
from gpux_pricing.domain.quotes import key_of

log = logging.getLogger("gpux.pricing.read_models")


class RedisReadModels:
    """``prices:best`` (hash of the latest quotes), ``stream:prices``, ``prices:candles:*``."""

    def __init__(self, redis: Redis, settings: GpuxSettings) -> None:
        self._redis = redis
        self._settings = settings
        self._failed_writes = 0
        self._rebuilt_after = 0
        """Failed writes that the last finished rebuild came after (and so made good)."""

    @property
    def failed_writes(self) -> int:
        """Writes that failed since this process started."""
        return self._failed_writes

    async def lost(self) -> bool:
        """Whether Redis may lack a write: one failed since the last rebuild started, or the
        key that rebuild left is gone (Redis restarted empty or was flushed). False while
        Redis does not answer: a check once it is back tells."""
        if self._failed_writes > self._rebuilt_after:
            return True
        try:
            return not await self._redis.exists(self._settings.redis_key(PRICING_READ_MODELS))
        except RedisError:
            return False

    async def rebuilt(self, failed_writes: int) -> None:
        """Mark a rebuild done that started when ``failed_writes`` writes had failed (a write
        that failed during it leaves the read models lost)."""
        pipe = self._redis.pipeline(transaction=False)
        pipe.set(self._settings.redis_key(PRICING_READ_MODELS), "1")
        if await self._execute(pipe, "rebuild mark", 1):
            self._rebuilt_after = max(self._rebuilt_after, failed_writes)

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

    async def _execute(self, pipe: Pipeline, what: str, count: int) -> bool:
        try:
            await pipe.execute()
        except RedisError as exc:
            self._failed_writes += 1
            log.warning(
                "read model not written; they are rebuilt once Redis answers",
                extra={"what": what, "count": count, "error": repr(exc)},
            )
            return False
        return True
