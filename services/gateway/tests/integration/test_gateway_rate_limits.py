"""The rate limiter on real Redis: a moving window, answered in one round trip per request."""

from __future__ import annotations

from typing import Any

from redis.asyncio import Redis

from gpux_gateway.adapters.redis.ratelimit import RateLimiter
from gpux_platform.settings import GpuxSettings

_EXECUTE: Any = Redis.execute_command


class CountingRedis(Redis):
    """A Redis client that counts the commands it sends (one command, one round trip)."""

    commands = 0

    async def execute_command(self, *args: Any, **options: Any) -> Any:
        self.commands += 1
        return await _EXECUTE(self, *args, **options)


async def test_a_window_of_three_counts_three_and_refuses_the_fourth_in_one_round_trip_each(
    gpux_settings: GpuxSettings,
) -> None:
    redis = CountingRedis.from_url(gpux_settings.redis_url)
    assert isinstance(redis, CountingRedis)
    try:
        limiter = RateLimiter(redis, gpux_settings.namespace, "3/minute", "1/minute")
        await limiter.hit("warm-up")  # the first call also loads the script
        redis.commands = 0
        verdicts = [await limiter.hit("key-1") for _ in range(4)]
        assert redis.commands == 4
        assert [v.allowed for v in verdicts] == [True, True, True, False]
        assert [v.headers["RateLimit-Remaining"] for v in verdicts] == ["2", "1", "0", "0"]
        assert all(v.headers["RateLimit-Limit"] == "3" for v in verdicts)
        assert 1 <= int(verdicts[-1].headers["Retry-After"]) <= 60
        assert "Retry-After" not in verdicts[0].headers
        assert 0 <= int(verdicts[0].headers["RateLimit-Reset"]) <= 60
        other = await limiter.hit("key-2")
        anonymous = [await limiter.hit("ip:1", anonymous=True) for _ in range(2)]
    finally:
        await redis.aclose()
    assert other.allowed  # limits are per identity
    assert [v.allowed for v in anonymous] == [True, False]  # and the anonymous limit is its own
