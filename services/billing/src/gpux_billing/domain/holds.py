"""What an order holds before the book sees it, and what becomes of the hold (pure).

An order holds its first billing period: one hour of its GPUs at its limit price, or at a
market order's cap. A market order without a cap gets one: the best ask it could take now
plus the slippage allowance, which the book then applies as the order's price limit. Each
fill takes its share of the hold into its lease (``lease_share``); a final status releases
what the fills left (``unfilled_micros``), once.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal

from gpux_billing.domain.amounts import BPS_PER_UNIT
from gpux_contracts.money import Currency, canonical, quantize, to_micros
from gpux_contracts.orders import OrderStatus, OrderTier
from gpux_contracts.prices import ALL_REGIONS

FIRST_PERIOD_HOURS = 1
RELEASING = frozenset({OrderStatus.CANCELLED, OrderStatus.EXPIRED, OrderStatus.REJECTED})
"""The book's final statuses that release what is left of an order's hold."""

Ask = tuple[str, OrderTier, str | None, Currency]
"""What prices a market order without a cap: (gpu, tier, region, currency) of its best ask."""
Book = tuple[str, str, str]
"""A book of best asks: (gpu, offer tier, region or ``ALL_REGIONS``)."""


@dataclass(frozen=True, slots=True)
class Hold:
    """The hold placed for one order, and what its fills and its release took of it."""

    order_id: str
    buyer_id: str
    gpu: str
    gpus: int
    currency: Currency
    """The wallet's currency (the hold is in it)."""
    held_micros: int
    released_micros: int = 0
    leased_gpus: int = 0
    """GPUs whose fills took their share of the hold into a lease."""


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


def tiers_of(tier: OrderTier) -> list[str]:
    """The offer tiers an order may take (``any``: either), whose best asks price its hold."""
    if tier is OrderTier.ANY:
        return [OrderTier.ON_DEMAND.value, OrderTier.INTERRUPTIBLE.value]
    return [tier.value]


def cheapest(ask: Ask, books: Mapping[Book, Mapping[Currency, Decimal]]) -> Decimal | None:
    """The cheapest best ask an order could take (None: none): the lowest price in its
    currency among the books of the tiers it may take, in its region (every region's book
    when it names none)."""
    gpu, tier, region, currency = ask
    found = [
        prices[currency]
        for t in tiers_of(tier)
        if (prices := books.get((gpu, t, region or ALL_REGIONS))) is not None and currency in prices
    ]
    return min(found) if found else None


def first_period_micros(price_per_gpu_hour: Decimal, gpus: int) -> int:
    """What the first billing period costs at ``price_per_gpu_hour``, in micro-units."""
    return to_micros(quantize(price_per_gpu_hour * gpus * FIRST_PERIOD_HOURS))


def stale(rate_at: datetime | None, now: datetime, policy: HoldPolicy) -> bool:
    """Whether a rate is too old to fund a hold (None: no conversion, never stale)."""
    return rate_at is not None and now - rate_at > policy.fx_max_age


def unfilled_micros(hold: Hold, filled_gpus: int) -> int:
    """What is left to release of a hold once ``filled_gpus`` keep their share for leases."""
    kept = hold.held_micros * min(filled_gpus, hold.gpus) // hold.gpus
    return max(hold.held_micros - kept - hold.released_micros, 0)


def lease_share(hold: Hold, gpus: int) -> tuple[int, int]:
    """A fill of ``gpus`` takes its share of the hold: (leased GPUs after it, share in micros).

    The shares of an order's fills add up to the hold's part for its filled GPUs (the same
    split the release of the unfilled part uses), whatever order the fills come in.
    """
    before = min(hold.leased_gpus, hold.gpus)
    after = min(before + gpus, hold.gpus)
    held = hold.held_micros
    return after, held * after // hold.gpus - held * before // hold.gpus
