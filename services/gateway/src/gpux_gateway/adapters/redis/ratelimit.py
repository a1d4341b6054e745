"""Rate limits per API key (and per client address for anonymous calls), kept in Redis.

A moving window, as the ``limits`` library keeps it (a Redis list of the window's request
times, newest first, at most ``limit`` long), in one script per request: ``limits`` asks
twice (one script to count the request, another for the window's stats that the
``RateLimit-*`` and ``Retry-After`` headers need), so a request would cost two round trips.
The limits are written in ``limits``' notation (``600/minute``), and the keys are those
``limits`` used, so windows carry over.

While Redis does not answer, each gateway process counts on its own (``LocalWindows``, the
same moving window in memory): requests keep being admitted within the limit per process,
so with N replicas a client may get up to N times its limit until Redis is back. Redis is
asked again every ``RETRY_REDIS_S``; a call that takes longer than ``REDIS_TIMEOUT_S`` counts
as down (redis-py would otherwise retry a refused connection for seconds per request).
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections import deque
from dataclasses import dataclass

from limits import RateLimitItem, parse
from redis.asyncio import Redis
from redis.commands.core import AsyncScript
from redis.exceptions import RedisError

from gpux_platform.metrics import DEGRADED

log = logging.getLogger("gpux.gateway.ratelimit")

REDIS_TIMEOUT_S = 0.25
"""How long one rate-limit call may wait for Redis before the request is counted locally."""
RETRY_REDIS_S = 1.0
"""How long the limiter counts locally after Redis failed, before it asks Redis again."""
SWEEP_EVERY = 1000
"""Local hits between two sweeps of the windows that emptied (bounded memory)."""

# KEYS[1]: the window (request times, newest first). ARGV: now, limit, window length (s).
# Returns {1 if counted else 0, requests in the window, the oldest one's time}.
HIT = """
local now = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local expiry = tonumber(ARGV[3])
local start = now - expiry
local allowed = 0
local last = redis.call('lindex', KEYS[1], limit - 1)
if not (last and tonumber(last) >= start) then
    redis.call('lpush', KEYS[1], ARGV[1])
    redis.call('ltrim', KEYS[1], 0, limit - 1)
    redis.call('expire', KEYS[1], expiry)
    allowed = 1
end
local low, high, oldest = 0, redis.call('llen', KEYS[1]) - 1, -1
while low <= high do
    local mid = math.floor((low + high) / 2)
    if tonumber(redis.call('lindex', KEYS[1], mid)) >= start then
        oldest = mid
        low = mid + 1
    else
        high = mid - 1
    end
end
if oldest < 0 then
    return {allowed, 0, ARGV[1]}
end
return {allowed, oldest + 1, redis.call('lindex', KEYS[1], oldest)}
"""


@dataclass(frozen=True, slots=True)
class Verdict:
    """Whether a request may pass, and the headers that tell the client its budget."""

    allowed: bool
    headers: dict[str, str]


Window = tuple[bool, int, float]
"""(counted, requests in the window, the oldest one's time): what ``HIT`` returns."""


class LocalWindows:
    """The same moving windows kept in this process's memory (the fallback without Redis)."""

    def __init__(self) -> None:
        self._windows: dict[str, tuple[int, deque[float]]] = {}
        self._hits = 0

    def hit(self, key: str, limit: int, expiry_s: int, now: float) -> Window:
        """Count one request in ``key``'s window unless ``limit`` are in it already."""
        _, window = self._windows.setdefault(key, (expiry_s, deque()))
        start = now - expiry_s
        while window and window[0] < start:
            window.popleft()
        allowed = len(window) < limit
        if allowed:
            window.append(now)
        self._hits += 1
        if self._hits % SWEEP_EVERY == 0:
            self._sweep(now)
        return allowed, len(window), window[0] if window else now

    def _sweep(self, now: float) -> None:
        """Forget the windows whose newest request is older than their length."""
        ended = [k for k, (expiry_s, w) in self._windows.items() if not w or w[-1] < now - expiry_s]
        for key in ended:
            del self._windows[key]

    def __len__(self) -> int:
        return len(self._windows)


class RateLimiter:
    """Moving-window limits in Redis, namespaced per deployment: one round trip a request;
    counted per process while Redis does not answer."""

    def __init__(self, redis: Redis, namespace: str, per_key: str, anonymous: str) -> None:
        self._prefix = f"{namespace}rl"
        self._hit: AsyncScript = redis.register_script(HIT)
        self._per_key: RateLimitItem = parse(per_key)
        self._anonymous: RateLimitItem = parse(anonymous)
        self.local = LocalWindows()
        """The windows counted in this process while Redis is down."""
        self._redis_down_until = 0.0

    @property
    def degraded(self) -> bool:
        """Whether requests are counted per process now (Redis failed within RETRY_REDIS_S)."""
        return time.monotonic() < self._redis_down_until

    async def _window(self, key: str, item: RateLimitItem, now: float) -> Window:
        expiry = item.get_expiry()
        if not self.degraded:
            try:
                async with asyncio.timeout(REDIS_TIMEOUT_S):
                    allowed, count, oldest = await self._hit(
                        keys=[key], args=[repr(now), item.amount, expiry]
                    )
            except (RedisError, OSError, TimeoutError) as exc:
                log.warning(
                    "Redis does not answer: rate limits counted per process",
                    extra={"error": repr(exc), "retry_s": RETRY_REDIS_S},
                )
                self._redis_down_until = time.monotonic() + RETRY_REDIS_S
            else:
                if self._redis_down_until:
                    log.info("Redis answers again: rate limits counted in Redis")
                    self._redis_down_until = 0.0
                return bool(allowed), int(count), float(oldest)
        DEGRADED.labels("rate_limit").inc()
        return self.local.hit(key, item.amount, expiry, now)

    async def hit(self, identity: str, anonymous: bool = False) -> Verdict:
        """Count one request for an identity; not allowed when its window is full."""
        item = self._anonymous if anonymous else self._per_key
        expiry = item.get_expiry()
        now = time.time()
        key = f"{self._prefix}:{item.key_for(identity)}"
        allowed, count, oldest = await self._window(key, item, now)
        reset_s = max(0, math.ceil(oldest + expiry - now))
        headers = {
            "RateLimit-Limit": str(item.amount),
            "RateLimit-Remaining": str(max(0, item.amount - int(count))),
            "RateLimit-Reset": str(reset_s),
        }
        if not allowed:
            headers["Retry-After"] = str(max(1, reset_s))
        return Verdict(bool(allowed), headers)
