"""Rate limits per API key (and per client address for anonymous calls), kept in Redis.

A moving window, as the ``limits`` library keeps it (a Redis list of the window's request
times, newest first, at most ``limit`` long), in one script per request: ``limits`` asks
twice (one script to count the request, another for the window's stats that the
``RateLimit-*`` and ``Retry-After`` headers need), so a request would cost two round trips.
The limits are written in ``limits``' notation (``600/minute``), and the keys are those
``limits`` used, so windows carry over.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

from limits import RateLimitItem, parse
from redis.asyncio import Redis
from redis.commands.core import AsyncScript

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


class RateLimiter:
    """Moving-window limits in Redis, namespaced per deployment: one round trip a request."""

    def __init__(self, redis: Redis, namespace: str, per_key: str, anonymous: str) -> None:
        self._prefix = f"{namespace}rl"
        self._hit: AsyncScript = redis.register_script(HIT)
        self._per_key: RateLimitItem = parse(per_key)
        self._anonymous: RateLimitItem = parse(anonymous)

    async def hit(self, identity: str, anonymous: bool = False) -> Verdict:
        """Count one request for an identity; not allowed when its window is full."""
        item = self._anonymous if anonymous else self._per_key
        expiry = item.get_expiry()
        now = time.time()
        key = f"{self._prefix}:{item.key_for(identity)}"
        allowed, count, oldest = await self._hit(keys=[key], args=[repr(now), item.amount, expiry])
        reset_s = max(0, math.ceil(float(oldest) + expiry - now))
        headers = {
            "RateLimit-Limit": str(item.amount),
            "RateLimit-Remaining": str(max(0, item.amount - int(count))),
            "RateLimit-Reset": str(reset_s),
        }
        if not allowed:
            headers["Retry-After"] = str(max(1, reset_s))
        return Verdict(bool(allowed), headers)
