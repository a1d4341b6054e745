"""From a book's quote to the ``best_ask.changed`` payload, and when two of them say the same."""

from __future__ import annotations

from datetime import UTC, datetime

from gpux_contracts.money import REFERENCE_CURRENCY, canonical, from_micros
from gpux_contracts.prices import BestAsk, BestAskChanged, PriceLevel
from gpux_pricing.domain.fx import RateTable
from gpux_pricing.domain.market import Quote

_SAME_TIME = datetime(2000, 1, 1, tzinfo=UTC)


def best_ask_payload(quote: Quote, rates: RateTable, now: datetime) -> BestAskChanged:
    """The event of one quote, its prices shown in every currency a rate is known for."""
    best = None
    if quote.best is not None:
        prices = rates.in_every_currency(quote.best.price, quote.best.currency, now)
        best = BestAsk(
            offer_id=quote.best.offer_id,
            price=canonical(quote.best.price),
            currency=quote.best.currency,
            prices={c: canonical(p) for c, p in prices.items()},
            gpus=quote.gpus_at_best,
        )
    depth = []
    for level in quote.depth:
        prices = rates.in_every_currency(
            from_micros(level.reference_micros), REFERENCE_CURRENCY, now
        )
        depth.append(
            PriceLevel(prices={c: canonical(p) for c, p in prices.items()}, gpus=level.gpus)
        )
    return BestAskChanged(
        gpu=quote.gpu, tier=quote.tier, region=quote.region, best=best, depth=depth, as_of=now
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
