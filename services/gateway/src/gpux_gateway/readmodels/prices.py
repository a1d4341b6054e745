"""The best asks pricing keeps in Redis, read for the API."""

from __future__ import annotations

from gpux_contracts.prices import BestAskChanged
from gpux_gateway.context import Gateway
from gpux_platform.redis_keys import BEST_ASKS


async def all_quotes(gw: Gateway) -> list[BestAskChanged]:
    """Every book's latest quote (every region), in key order."""
    raw = await gw.redis.hgetall(gw.settings.redis_key(BEST_ASKS))
    return [BestAskChanged.model_validate_json(raw[k]) for k in sorted(raw)]


async def gpu_quotes(gw: Gateway, gpu: str) -> list[BestAskChanged]:
    """The latest quotes of one GPU model."""
    return [q for q in await all_quotes(gw) if q.gpu == gpu]
