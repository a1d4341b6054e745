"""Sellers' reliability from ``billing.reliability`` on the memory unit of work.

Pricing keeps each seller's counts with the largest total, whatever the order and repetition
of the events; a change republishes the quotes of the books the seller has offers in (one
``best_ask.changed`` per quote that changed, per batch), and every quote, however it came to
be sent (a report of the book, a change of counts, a rebuild), shows its sellers' counts as
the store holds them.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from typing import Any

import pytest

from gpux_contracts.events import Envelope, Payload, wrap
from gpux_contracts.money import Currency
from gpux_contracts.offers import OfferStatus, OfferSubmitted, Tier
from gpux_contracts.prices import BestAskChanged
from gpux_contracts.reliability import ReliabilityCounts
from gpux_contracts.topics import (
    BILLING_RELIABILITY,
    OFFERS_COMMANDS,
    OFFERS_STATUS,
    PRICING_BEST_ASKS,
    Topic,
)
from gpux_devinfra.testing.payloads import GPU, offer_status, offer_submitted
from gpux_platform.batches import BatchHandler, Outcome
from gpux_platform.clock import ManualClock
from gpux_pricing.adapters.memory.read_models import MemoryReadModels
from gpux_pricing.adapters.memory.unit_of_work import MemoryPricingUnitOfWork
from gpux_pricing.domain.quotes import key_of, same_state
from gpux_pricing.service import HANDLERS_BY_TOPIC

from ..reliability_events import counts, reliability_changed
from .conftest import START, restart

pytestmark = pytest.mark.unit

ON_DEMAND, INTERRUPTIBLE = f"{GPU}|on_demand|*", f"{GPU}|interruptible|*"
H100 = "h100-sxm|on_demand|*"

# (offer id, seller, GPU model, price in EUR, tier); o1 and o2 share a price.
OFFERS = [
    ("o1", "s1", GPU, "0.40", Tier.ON_DEMAND),
    ("o2", "s2", GPU, "0.40", Tier.ON_DEMAND),
    ("o3", "s2", GPU, "0.50", Tier.ON_DEMAND),
    ("o4", "s3", GPU, "0.20", Tier.INTERRUPTIBLE),
    ("o5", "s1", "h100-sxm", "2.00", Tier.ON_DEMAND),
]


def submitted(offer_id: str) -> OfferSubmitted:
    _, seller, gpu, price, tier = next(o for o in OFFERS if o[0] == offer_id)
    return offer_submitted(
        offer_id, price=price, currency=Currency.EUR, seller_id=seller, gpu=gpu, tier=tier
    )


def event(payload: Payload, producer: str = "billing") -> Envelope[Any]:
    return wrap(payload, producer=producer, occurred_at=START)


def changed(seller_id: str, seller: ReliabilityCounts, offer_id: str = "o1") -> Envelope[Any]:
    """Billing counted a lease of ``offer_id``: the seller's counts are now ``seller``."""
    return reliability_changed(seller_id, seller, offer_id, at=START)


async def apply(
    unit: MemoryPricingUnitOfWork, topic: Topic, events: Sequence[Envelope[Any]]
) -> Outcome:
    return await BatchHandler(topic, HANDLERS_BY_TOPIC[topic], lambda: unit, retries=1).apply(
        events
    )


async def on_book(unit: MemoryPricingUnitOfWork, *offer_ids: str) -> None:
    """The offers accepted by pricing and reported live, all their GPUs free."""
    gpu = GPU
    commands = [event(submitted(o), producer="gateway") for o in offer_ids]
    await apply(unit, OFFERS_COMMANDS, commands)
    reports = []
    for offer_id in offer_ids:
        offer = submitted(offer_id)
        gpu = offer.gpu
        reports.append(event(offer_status(offer_id, OfferStatus.LIVE, offer.gpus, gpu=gpu)))
    await apply(unit, OFFERS_STATUS, reports)


def sent(unit: MemoryPricingUnitOfWork, since: int = 0) -> dict[str, BestAskChanged]:
    """The quotes sent since ``since``, the last of each key."""
    return {
        m.key: m.envelope.payload for m in unit.published[since:] if m.topic == PRICING_BEST_ASKS
    }


def models(unit: MemoryPricingUnitOfWork) -> MemoryReadModels:
    assert isinstance(unit.read_models, MemoryReadModels)
    return unit.read_models


async def test_a_change_of_counts_republishes_the_books_of_the_sellers_offers(
    unit: MemoryPricingUnitOfWork,
) -> None:
    await on_book(unit, "o1", "o2", "o3", "o4", "o5")
    before = sent(unit)[ON_DEMAND]
    assert before.best is not None
    assert before.best.seller_reliability is None  # nothing counted yet
    assert before.depth[0].reliability is None

    since, commits = len(unit.published), unit.commits
    events = [changed("s1", counts(3, 1)), changed("s2", counts(1))]
    outcome = await apply(unit, BILLING_RELIABILITY, events)
    assert (outcome.applied, outcome.units, unit.commits - commits) == (2, 1, 1)
    quotes = sent(unit, since)
    # s1 sells in the on-demand books of both GPU models, s2 in one; s3 (interruptible) is
    # not counted and its book is left alone.
    assert sorted(quotes) == [H100, ON_DEMAND]
    on_demand = quotes[ON_DEMAND]
    assert on_demand.best is not None
    assert (on_demand.best.offer_id, on_demand.best.seller_reliability) == ("o1", counts(3, 1))
    first, second = on_demand.depth
    assert (first.reliability, first.min_reliability) == (counts(4, 1), Decimal("0.7500"))
    assert (second.reliability, second.min_reliability) == (counts(1), Decimal("1.0000"))
    h100 = quotes[H100]
    assert h100.best is not None
    assert h100.best.seller_reliability == counts(3, 1)
    # Each republished book is caused by the last event of a seller in it; the read models
    # follow.
    causes = {m.key: m.envelope.causation_id for m in unit.published[since:]}
    assert causes == {H100: events[0].event_id, ON_DEMAND: events[1].event_id}
    assert same_state(models(unit).quotes[ON_DEMAND], on_demand)
    assert sorted(key_of(q) for q in models(unit).stream[-2:]) == [H100, ON_DEMAND]


async def test_counts_never_step_back_whatever_the_order_or_the_batches(
    unit: MemoryPricingUnitOfWork,
) -> None:
    await on_book(unit, "o1")
    since = len(unit.published)
    # A seller's events from two offers' partitions, the larger total first, in one batch.
    await apply(unit, BILLING_RELIABILITY, [changed("s1", counts(5, 1)), changed("s1", counts(4))])
    [quote] = sent(unit, since).values()
    assert quote.best is not None
    assert quote.best.seller_reliability == counts(5, 1)
    assert unit.state.reliability == {"s1": counts(5, 1)}

    # Older counts, or the same counts again, in a later batch: nothing is sent.
    since = len(unit.published)
    await apply(
        unit, BILLING_RELIABILITY, [changed("s1", counts(2, 2)), changed("s1", counts(5, 1))]
    )
    assert sent(unit, since) == {}
    assert unit.state.reliability == {"s1": counts(5, 1)}

    # The same event again is claimed once (the inbox): nothing new either.
    larger = changed("s1", counts(6, 1))
    await apply(unit, BILLING_RELIABILITY, [larger])
    since = len(unit.published)
    outcome = await apply(unit, BILLING_RELIABILITY, [larger])
    assert (outcome.applied, outcome.duplicate) == (0, 1)
    assert sent(unit, since) == {}


async def test_a_seller_with_no_offer_for_sale_changes_no_quote_and_its_counts_wait(
    unit: MemoryPricingUnitOfWork,
) -> None:
    await on_book(unit, "o1")
    await apply(unit, OFFERS_COMMANDS, [event(submitted("o2"), producer="gateway")])
    since = len(unit.published)
    # s2's offer is accepted, not on the book yet; s9 has no offer at all.
    await apply(unit, BILLING_RELIABILITY, [changed("s2", counts(2)), changed("s9", counts(1))])
    assert sent(unit, since) == {}
    assert unit.state.reliability == {"s2": counts(2), "s9": counts(1)}

    # Once the book reports s2's offer live, its quote shows s2's counts.
    report = offer_status("o2", OfferStatus.LIVE, 4, seller_id="s2")
    await apply(unit, OFFERS_STATUS, [event(report, producer="matching")])
    quote = sent(unit, since)[ON_DEMAND]
    assert quote.depth[0].reliability == counts(2)
    assert quote.best is not None
    assert quote.best.seller_reliability is None  # o1 (s1, the lower id) is the best ask


async def test_a_withdrawn_offer_no_longer_ties_its_book_to_its_seller(
    unit: MemoryPricingUnitOfWork,
) -> None:
    await on_book(unit, "o1", "o4")
    gone = offer_status("o4", OfferStatus.WITHDRAWN, 0, seller_id="s3")
    await apply(unit, OFFERS_STATUS, [event(gone, producer="matching")])
    since = len(unit.published)
    await apply(unit, BILLING_RELIABILITY, [changed("s3", counts(1), offer_id="o4")])
    assert sent(unit, since) == {}
    async with unit as uow:
        assert await uow.offers.books_of_sellers(["s1", "s3"]) == {"s1": [(GPU, "on_demand")]}


async def test_a_rebuild_shows_the_counts_the_store_holds(
    unit: MemoryPricingUnitOfWork, clock: ManualClock
) -> None:
    await on_book(unit, "o1", "o2")
    await apply(unit, BILLING_RELIABILITY, [changed("s1", counts(1, 1)), changed("s2", counts(3))])
    _, fresh = await restart(unit, clock)
    shown = fresh.quotes[ON_DEMAND]
    assert shown.best is not None
    assert shown.best.seller_reliability == counts(1, 1)
    assert (shown.depth[0].reliability, shown.depth[0].min_reliability) == (
        counts(4, 1),
        Decimal("0.5000"),
    )
    assert same_state(shown, models(unit).quotes[ON_DEMAND])
