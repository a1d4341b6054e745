"""From a book's quote to the ``best_ask.changed`` payload, and when two of them say the same.

A quote shows how its sellers deliver (docs/DELIVERY.md, "Seller reliability"): the best
ask its seller's counts, each depth level the summed counts of its distinct sellers and the
lowest rate among them. The sellers' counts are given (``SellerCounts``, as the store holds
them); a seller with no counted lease adds nothing and has no rate.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from decimal import Decimal
from typing import NamedTuple

from gpux_contracts.money import REFERENCE_CURRENCY, canonical, from_micros
from gpux_contracts.prices import BestAsk, BestAskChanged, PriceLevel
from gpux_contracts.reliability import ReliabilityCounts
from gpux_pricing.domain.fx import RateTable
from gpux_pricing.domain.market import Level, Quote

_SAME_TIME = datetime(2000, 1, 1, tzinfo=UTC)

SellerCounts = Mapping[str, ReliabilityCounts]
"""Each seller's counts (``gpux_contracts.reliability``), by seller id; absent: none held."""


class LevelReliability(NamedTuple):
    """What one price level shows of its sellers: their summed counts and the lowest rate."""

    counts: ReliabilityCounts | None
    """None: none of the level's sellers has a counted lease."""
    min_rate: Decimal | None


def counted(seller_id: str, counts: SellerCounts) -> ReliabilityCounts | None:
    """A seller's counts, None while it has no counted lease."""
    found = counts.get(seller_id)
    return found if found is not None and found.total > 0 else None


def level_reliability(sellers: Iterable[str], counts: SellerCounts) -> LevelReliability:
    """The summed counts of the distinct ``sellers`` that have counted leases, and the lowest
    rate among them (``ReliabilityCounts.rate``, the one rounding rule); nothing when none has."""
    held = [c for s in set(sellers) if (c := counted(s, counts)) is not None]
    if not held:
        return LevelReliability(None, None)
    summed = ReliabilityCounts(
        ready_in_time=sum(c.ready_in_time for c in held),
        failed=sum(c.failed for c in held),
        reclaimed=sum(c.reclaimed for c in held),
    )
    return LevelReliability(summed, min(r for c in held if (r := c.rate()) is not None))


def sellers_of(quote: Quote) -> set[str]:
    """Every seller whose counts the quote's payload shows: its best ask's and its levels'."""
    sellers = {s for level in quote.depth for s in level.sellers}
    if quote.best is not None:
        sellers.add(quote.best.seller_id)
    return sellers


def best_ask_payload(
    quote: Quote, rates: RateTable, counts: SellerCounts, now: datetime
) -> BestAskChanged:
    """The event of one quote, its prices shown in every currency a rate is known for and
    its sellers' reliability as ``counts`` holds it."""
    best = None
    if quote.best is not None:
        prices = rates.in_every_currency(quote.best.price, quote.best.currency, now)
        best = BestAsk(
            offer_id=quote.best.offer_id,
            price=canonical(quote.best.price),
            currency=quote.best.currency,
            prices={c: canonical(p) for c, p in prices.items()},
            gpus=quote.gpus_at_best,
            seller_reliability=counted(quote.best.seller_id, counts),
        )
    depth = [_price_level(level, rates, counts, now) for level in quote.depth]
    return BestAskChanged(
        gpu=quote.gpu, tier=quote.tier, region=quote.region, best=best, depth=depth, as_of=now
    )


def _price_level(level: Level, rates: RateTable, counts: SellerCounts, now: datetime) -> PriceLevel:
    prices = rates.in_every_currency(from_micros(level.reference_micros), REFERENCE_CURRENCY, now)
    reliability = level_reliability(level.sellers, counts)
    return PriceLevel(
        prices={c: canonical(p) for c, p in prices.items()},
        gpus=level.gpus,
        reliability=reliability.counts,
        min_reliability=reliability.min_rate,
    )


def key_of(payload: BestAskChanged) -> str:
    """The compacted-topic and Redis hash key of a quote: ``gpu|tier|region``."""
    return f"{payload.gpu}|{payload.tier}|{payload.region}"


def same_state(payload: BestAskChanged, before: BestAskChanged | None) -> bool:
    """Whether two quotes say the same, whatever their times (the stream sends only changes)."""
    if before is None:
        return False
    return payload.model_copy(update={"as_of": _SAME_TIME}) == before.model_copy(
        update={"as_of": _SAME_TIME}
    )
