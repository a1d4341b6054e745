"""Rate limits per API key (and per client address for anonymous calls), kept in Redis.

We use the ``limits`` library (moving window over Redis sorted sets) rather than
our own counter: it is well kept, exact at window edges, and tells the reset time
that the ``RateLimit-*`` and ``Retry-After`` headers need.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

from limits import RateLimitItem, parse
from limits.aio.storage import RedisStorage
from limits.aio.strategies import MovingWindowRateLimiter


@dataclass(frozen=True, slots=True)
class Verdict:
    """Whether a request may pass, and the headers that tell the client its budget."""

    allowed: bool
    headers: dict[str, str]


class RateLimiter:
    """Moving-window limits in Redis, namespaced per deployment."""

    def __init__(self, redis_url: str, namespace: str, per_key: str, anonymous: str) -> None:
        uri = redis_url.replace("redis://", "async+redis://", 1).replace(
            "rediss://", "async+rediss://", 1
        )
        self._storage = RedisStorage(uri, implementation="redispy", key_prefix=f"{namespace}rl")
        self._limiter = MovingWindowRateLimiter(self._storage)
        self._per_key: RateLimitItem = parse(per_key)
        self._anonymous: RateLimitItem = parse(anonymous)

    async def hit(self, identity: str, anonymous: bool = False) -> Verdict:
        """Count one request for an identity; not allowed when its window is full."""
        item = self._anonymous if anonymous else self._per_key
        allowed = await self._limiter.hit(item, identity)
        stats = await self._limiter.get_window_stats(item, identity)
        reset_s = max(0, math.ceil(stats.reset_time - time.time()))
        headers = {
            "RateLimit-Limit": str(item.amount),
            "RateLimit-Remaining": str(max(0, stats.remaining)),
            "RateLimit-Reset": str(reset_s),
        }
        if not allowed:
            headers["Retry-After"] = str(max(1, reset_s))
        return Verdict(allowed, headers)
