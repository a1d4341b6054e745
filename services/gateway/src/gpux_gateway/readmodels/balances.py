"""The wallet balances billing keeps in Redis (``balances:<account>``), read for the API."""

from __future__ import annotations

from gpux_contracts.billing import BalanceChanged
from gpux_gateway.context import Gateway
from gpux_platform.redis_keys import BALANCES


async def account_balances(gw: Gateway, account_id: str) -> list[BalanceChanged]:
    """An account's latest balance per currency, in currency order (wallets never used: none)."""
    raw = await gw.redis.hgetall(gw.settings.redis_key(BALANCES, account_id))
    return [BalanceChanged.model_validate_json(raw[k]) for k in sorted(raw)]
