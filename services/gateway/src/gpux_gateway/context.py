"""What the gateway's routes share: settings, connections, clock, rate limiter."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

import asyncpg
from redis.asyncio import Redis

from gpux_gateway.adapters.ratelimit import RateLimiter
from gpux_gateway.config import GatewaySettings
from gpux_platform.clock import Clock


@dataclass(frozen=True)
class Gateway:
    """The gateway's dependencies, handed to each router factory."""

    settings: GatewaySettings
    pool: asyncpg.Pool
    redis: Redis
    clock: Clock
    limiter: RateLimiter

    @property
    def pepper(self) -> bytes:
        """The server secret of key digests."""
        return self.settings.key_pepper.get_secret_value().encode()

    @property
    def idempotency_ttl(self) -> timedelta:
        """How long creating responses are kept for replays."""
        return timedelta(hours=self.settings.idempotency_ttl_h)
