"""The wallet balances billing keeps in Redis (``balances:<account>``), read for the API."""

from __future__ import annotations

from redis.asyncio import Redis

from gpux_contracts.billing import BalanceChanged
from gpux_platform.redis_keys import BALANCES
from gpux_platform.settings import GpuxSettings


class Balances:
    """Reads billing's balances read model (namespaced by the settings)."""

    def __init__(self, redis: Redis, settings: GpuxSettings) -> None:
        self._redis = redis
        self._settings = settings

    async def of_account(self, account_id: str) -> list[BalanceChanged]:
        """An account's latest balance per currency, in currency order (unused wallets: none)."""
        raw = await self._redis.hgetall(self._settings.redis_key(BALANCES, account_id))
        return [BalanceChanged.model_validate_json(raw[k]) for k in sorted(raw)]
