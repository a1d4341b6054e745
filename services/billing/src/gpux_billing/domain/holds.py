"""What an order holds before the book sees it (pure).

An order holds its first billing period: one hour of its GPUs at its limit price, or at a
market order's cap. A market order without a cap gets one: the best ask it could take now
plus the slippage allowance, which the book then applies as the order's price limit.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal

from gpux_billing.domain.amounts import BPS_PER_UNIT
from gpux_contracts.money import canonical, quantize, to_micros

FIRST_PERIOD_HOURS = 1


@dataclass(frozen=True, slots=True)
class HoldPolicy:
    """The operator's settings for holds."""

    slippage_bps: int = 500
    """A market order without a cap may pay up to this much over the best ask (5 %)."""
    fx_max_age: timedelta = timedelta(days=7)
    """A rate older than this is stale: it funds no hold in another currency."""


def market_cap(best_ask: Decimal, slippage_bps: int) -> Decimal:
    """The price limit of a market order without one: the best ask plus the slippage."""
    return canonical(quantize(best_ask * (BPS_PER_UNIT + slippage_bps) / BPS_PER_UNIT))


def first_period_micros(price_per_gpu_hour: Decimal, gpus: int) -> int:
    """What the first billing period costs at ``price_per_gpu_hour``, in micro-units."""
    return to_micros(quantize(price_per_gpu_hour * gpus * FIRST_PERIOD_HOURS))


def stale(rate_at: datetime | None, now: datetime, policy: HoldPolicy) -> bool:
    """Whether a rate is too old to fund a hold (None: no conversion, never stale)."""
    return rate_at is not None and now - rate_at > policy.fx_max_age
