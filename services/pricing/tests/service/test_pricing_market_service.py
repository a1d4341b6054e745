"""The book's reports on the memory unit of work: best ask and depth, conflated per unit.

Each unit of work sends at most one ``best_ask.changed`` per quote (book and region), with the
book's latest state, and only when it differs from the quote sent before; the read models are
written once per unit. Whatever the reports and however they are batched, what was sent last
for each quote equals the quote recomputed from scratch from the store.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpux_contracts.events import Envelope, Payload, wrap
from gpux_contracts.fx import RatePublished
from gpux_contracts.money import Currency
from gpux_contracts.offers import (
    OfferChangeRequested,
    OfferStatus,
    OfferStatusChanged,
    OfferSubmitted,
    Tier,
)
from gpux_contracts.prices import BestAskChanged
from gpux_contracts.topics import FX_RATES, OFFERS_COMMANDS, OFFERS_STATUS, PRICING_BEST_ASKS, Topic
from gpux_devinfra.testing.payloads import GPU, offer_status, offer_submitted
from gpux_platform.batches import BatchHandler, Handler, Outcome
from gpux_platform.clock import ManualClock
from gpux_pricing.adapters.memory.read_models import MemoryReadModels
from gpux_pricing.adapters.memory.unit_of_work import MemoryPricingUnitOfWork
from gpux_pricing.config import PricingSettings
from gpux_pricing.domain.market import live_leg, quotes_from_scratch
from gpux_pricing.domain.quotes import best_ask_payload, key_of, same_state
from gpux_pricing.service import HANDLERS_BY_TOPIC, market
from gpux_pricing.service.market import BookCache
from gpux_pricing.service.unit_of_work import PricingUnitOfWork

pytestmark = pytest.mark.unit

# (offer id, price, currency, GPUs, tier, region); 1 USD = 0.92 EUR, 1 GBP = 1.18 EUR.
OFFERS = [
    ("o1", "0.40", Currency.USD, 4, Tier.ON_DEMAND, None),  # 0.368 EUR
    ("o2", "0.35", Currency.EUR, 2, Tier.ON_DEMAND, None),  # 0.35 EUR, the cheapest
    ("o3", "0.30", Currency.GBP, 8, Tier.ON_DEMAND, None),  # 0.354 EUR
    ("o4", "0.20", Currency.EUR, 3, Tier.INTERRUPTIBLE, None),
    ("o5", "0.25", Currency.USD, 5, Tier.INTERRUPTIBLE, "eu-west"),
    ("o6", "0.45", Currency.EUR, 1, Tier.ON_DEMAND, "eu-west"),
    ("o7", "0.38", Currency.EUR, 3, Tier.ON_DEMAND, "us-east"),  # and interruptible at 0.22
]
SECOND_PRICES = {"o7": Decimal("0.22")}
"""The interruptible prices of the offers sold in both tiers."""
ON_DEMAND, INTERRUPTIBLE = f"{GPU}|on_demand|*", f"{GPU}|interruptible|*"


def submitted(offer_id: str) -> OfferSubmitted:
    _, price, currency, gpus, tier, region = next(o for o in OFFERS if o[0] == offer_id)
    return offer_submitted(
        offer_id,
        price=price,
        currency=currency,
        gpus=gpus,
        tier=tier,
        region=region,
        interruptible_price_per_gpu_hour=SECOND_PRICES.get(offer_id),
    )


def event(payload: Payload, producer: str = "matching") -> Envelope[Any]:
    return wrap(payload, producer=producer, occurred_at=datetime(2026, 11, 29, tzinfo=UTC))


def report(offer_id: str, status: str = "live", left: int | None = None) -> Envelope[Any]:
    """What the book says of an offer (``left`` defaults to all of its GPUs)."""
    gpus = submitted(offer_id).gpus
    payload = offer_status(offer_id, OfferStatus(status), gpus if left is None else left)
    return event(payload)


async def apply(
    unit: MemoryPricingUnitOfWork,
    topic: Topic,
    events: Sequence[Envelope[Any]],
    handlers: Mapping[type[Payload], Handler[PricingUnitOfWork]] | None = None,
) -> Outcome:
    chosen = HANDLERS_BY_TOPIC[topic] if handlers is None else handlers
    return await BatchHandler(topic, chosen, lambda: unit, retries=1).apply(events)


async def accept(unit: MemoryPricingUnitOfWork, *offer_ids: str) -> None:
    commands = [event(submitted(o), producer="gateway") for o in offer_ids]
    await apply(unit, OFFERS_COMMANDS, commands)


def models(unit: MemoryPricingUnitOfWork) -> MemoryReadModels:
    assert isinstance(unit.read_models, MemoryReadModels)
    return unit.read_models


def best_asks(unit: MemoryPricingUnitOfWork, since: int = 0) -> list[BestAskChanged]:
    return [m.envelope.payload for m in unit.published[since:] if m.topic == PRICING_BEST_ASKS]


async def scratch(unit: MemoryPricingUnitOfWork) -> dict[str, BestAskChanged]:
    """Every book's quotes recomputed from the store, the way they would be sent."""
    async with unit as uow:
        rates = await uow.rates.table()
        books = await uow.offers.books()
        quotes: dict[str, BestAskChanged] = {}
        for gpu, tier in books:
            held = await uow.offers.on_book(gpu, tier)
            offers = [live_leg(o, tier, left, rates, uow.now()) for o, left in held]
            ranked = [o for o in offers if o is not None]
            for quote in quotes_from_scratch(ranked, gpu, tier):
                quotes[quote.key] = best_ask_payload(quote, rates, uow.state.reliability, uow.now())
    return quotes


async def assert_read_model_is_current(unit: MemoryPricingUnitOfWork) -> None:
    expected = await scratch(unit)
    shown = dict(models(unit).quotes)
    for key, payload in expected.items():
        if key in shown:
            assert same_state(shown.pop(key), payload), key
        else:  # a book the book never reported on: nothing to show yet
            assert (payload.best, payload.depth) == (None, []), key
    for key, payload in shown.items():  # regions that emptied show that they are empty
        assert (payload.best, payload.depth) == (None, []), key


def best_id(quote: BestAskChanged) -> str | None:
    return None if quote.best is None else quote.best.offer_id


async def test_a_batch_sends_each_changed_quote_once_with_the_books_latest_state(
    unit: MemoryPricingUnitOfWork,
) -> None:
    await accept(unit, "o1", "o2", "o3", "o4")
    reports = [report(o) for o in ("o1", "o2", "o3", "o4")]
    reports += [report("o2", left=1), report("o4", left=2), report("o2", "exhausted", 0)]
    reports += [report("o3", left=5), report("o1", left=3)]
    commits = unit.commits
    outcome = await apply(unit, OFFERS_STATUS, reports)
    assert (outcome.applied, outcome.units, unit.commits - commits) == (len(reports), 1, 1)
    sent = best_asks(unit)
    assert sorted(key_of(q) for q in sent) == [INTERRUPTIBLE, ON_DEMAND]
    on_demand = next(q for q in sent if key_of(q) == ON_DEMAND)
    assert best_id(on_demand) == "o3"  # 0.354 EUR once o2 is sold out
    assert [(str(lvl.prices[Currency.EUR]), lvl.gpus) for lvl in on_demand.depth] == [
        ("0.354", 5),
        ("0.368", 3),
    ]
    # The best-ask events of a unit are caused by the last report that changed the book.
    cause = next(m for m in unit.published if m.topic == PRICING_BEST_ASKS and m.key == ON_DEMAND)
    assert cause.envelope.causation_id == reports[-1].event_id
    assert (models(unit).writes, len(models(unit).stream)) == (1, 2)
    await assert_read_model_is_current(unit)


async def test_the_best_ask_is_the_cheapest_in_reference_terms_and_moves(
    unit: MemoryPricingUnitOfWork,
) -> None:
    await accept(unit, "o1", "o2", "o3")
    await apply(unit, OFFERS_STATUS, [report("o1"), report("o2"), report("o3")])
    [book] = best_asks(unit)
    assert best_id(book) == "o2"
    assert book.best is not None
    assert (book.best.price, book.best.gpus) == (Decimal("0.35"), 2)
    assert book.best.prices[Currency.USD] == Decimal("0.380435")  # 0.35 / 0.92
    steps = [
        (report("o2", left=1), "o2"),  # partly filled
        (report("o2", "withdrawn", 0), "o3"),  # the cheapest withdrawn
        (report("o3", "expired", 0), "o1"),
        (report("o1", "exhausted", 0), None),
    ]
    for step, best in steps:
        since = len(unit.published)
        await apply(unit, OFFERS_STATUS, [step])
        [quote] = best_asks(unit, since)
        assert best_id(quote) == best
    partly = best_asks(unit)[1].best
    assert partly is not None
    assert partly.gpus == 1
    await assert_read_model_is_current(unit)


async def test_a_report_that_changes_no_quote_sends_nothing(
    unit: MemoryPricingUnitOfWork,
) -> None:
    await accept(unit, "o1", "o2")
    await apply(unit, OFFERS_STATUS, [report("o1"), report("o2")])
    since, streamed = len(unit.published), len(models(unit).stream)
    # The same state again, and a change undone within one batch.
    await apply(unit, OFFERS_STATUS, [report("o1")])
    await apply(unit, OFFERS_STATUS, [report("o2", left=1), report("o2")])
    assert best_asks(unit, since) == []
    assert len(models(unit).stream) == streamed


async def test_a_region_whose_last_offer_left_is_sent_empty(unit: MemoryPricingUnitOfWork) -> None:
    await accept(unit, "o1", "o6")
    await apply(unit, OFFERS_STATUS, [report("o1"), report("o6")])
    assert sorted(key_of(q) for q in best_asks(unit)) == [ON_DEMAND, f"{GPU}|on_demand|eu-west"]
    since = len(unit.published)
    await apply(unit, OFFERS_STATUS, [report("o6", "withdrawn", 0)])
    sent = {key_of(q): q for q in best_asks(unit, since)}
    assert (sent[f"{GPU}|on_demand|eu-west"].best, sent[f"{GPU}|on_demand|eu-west"].depth) == (
        None,
        [],
    )
    assert len(sent[ON_DEMAND].depth) == 1
    await assert_read_model_is_current(unit)


async def test_pricings_own_statuses_and_unknown_offers_move_nothing(
    unit: MemoryPricingUnitOfWork,
) -> None:
    await accept(unit, "o1")
    since = len(unit.published)
    own = offer_status("o1", OfferStatus.LIVE, 4)
    unknown = own.model_copy(update={"offer_id": "nobody"})
    outcome = await apply(unit, OFFERS_STATUS, [event(own, producer="pricing"), event(unknown)])
    assert outcome.applied == 2
    assert unit.published[since:] == []
    assert not unit.state.offers["o1"].on_book


async def test_new_rates_rank_the_offers_again_at_the_next_change(
    unit: MemoryPricingUnitOfWork, clock: ManualClock
) -> None:
    await accept(unit, "o1", "o2", "o3")
    await apply(unit, OFFERS_STATUS, [report("o1"), report("o2"), report("o3")])
    cheaper = RatePublished(
        base=Currency.USD, quote=Currency.EUR, rate=Decimal("0.80"), as_of=clock.now(), source="t"
    )
    since = len(unit.published)
    await apply(unit, FX_RATES, [event(cheaper, producer="pricing")])
    assert best_asks(unit, since) == []  # a rate alone publishes nothing, as before
    await apply(unit, OFFERS_STATUS, [report("o3", left=7)])
    [quote] = best_asks(unit, since)
    assert best_id(quote) == "o1"  # 0.40 USD = 0.32 EUR now
    assert quote.best is not None
    assert quote.best.prices[Currency.EUR] == Decimal("0.32")
    await assert_read_model_is_current(unit)


async def test_a_book_another_instance_changed_is_loaded_again(
    unit: MemoryPricingUnitOfWork, clock: ManualClock
) -> None:
    other = MemoryPricingUnitOfWork(
        clock=clock, band_for=PricingSettings().band_for, state=unit.state, cache=BookCache()
    )
    await accept(unit, "o1", "o2")
    await apply(unit, OFFERS_STATUS, [report("o1"), report("o2")])
    # A rebalance: the other instance applies a report of the same book, then hands it back.
    await apply(other, OFFERS_STATUS, [report("o2", left=1)])
    since = len(unit.published)
    await apply(unit, OFFERS_STATUS, [report("o1", left=3)])
    [quote] = best_asks(unit, since)
    assert best_id(quote) == "o2"
    assert quote.best is not None
    assert quote.best.gpus == 1  # the other instance's change, not this cache's stale copy
    assert [lvl.gpus for lvl in quote.depth] == [1, 3]


async def test_a_record_that_fails_is_set_aside_and_the_books_follow_what_committed(
    unit: MemoryPricingUnitOfWork,
) -> None:
    await accept(unit, "o1", "o2", "o3")
    await apply(unit, OFFERS_STATUS, [report("o1"), report("o2"), report("o3")])
    poison = report("o2", "withdrawn", 0)

    async def failing(uow: PricingUnitOfWork, event: Envelope[Any]) -> None:
        await market.on_book_status(uow, event)  # changes the cached book first, then fails
        if event.event_id == poison.event_id:
            raise ValueError("never applies")

    batch = [report("o1", left=2), poison, report("o3", left=4)]
    outcome = await apply(unit, OFFERS_STATUS, batch, {OfferStatusChanged: failing})
    assert (outcome.applied, outcome.set_aside) == (2, 1)
    assert unit.state.offers["o2"].on_book  # the withdrawal never happened
    await assert_read_model_is_current(unit)
    since = len(unit.published)
    await apply(unit, OFFERS_STATUS, [report("o1", left=1)])
    [quote] = best_asks(unit, since)
    assert best_id(quote) == "o2"
    await assert_read_model_is_current(unit)


def levels(quote: BestAskChanged) -> list[tuple[Decimal, int]]:
    """A quote's depth as (EUR price, GPUs) per level."""
    return [(level.prices[Currency.EUR], level.gpus) for level in quote.depth]


def eur(*pairs: tuple[str, int]) -> list[tuple[Decimal, int]]:
    """Levels as tests write them: (EUR price, GPUs)."""
    return [(Decimal(price), gpus) for price, gpus in pairs]


async def quotes_after(
    unit: MemoryPricingUnitOfWork, *reports: Envelope[Any]
) -> dict[str, BestAskChanged]:
    """The all-regions quotes the unit of these reports sent, by key."""
    since = len(unit.published)
    await apply(unit, OFFERS_STATUS, list(reports))
    return {key_of(q): q for q in best_asks(unit, since) if q.region == "*"}


async def test_a_two_price_offer_is_quoted_in_both_tiers_with_its_free_gpus(
    unit: MemoryPricingUnitOfWork,
) -> None:
    await accept(unit, "o2", "o4", "o7")
    sent = await quotes_after(unit, report("o2"), report("o4"), report("o7"))
    assert levels(sent[ON_DEMAND]) == eur(("0.35", 2), ("0.38", 3))
    assert levels(sent[INTERRUPTIBLE]) == eur(("0.2", 3), ("0.22", 3))
    steps = [
        (report("o7", left=1), [("0.35", 2), ("0.38", 1)], [("0.2", 3), ("0.22", 1)]),
        (report("o7", "exhausted", 0), [("0.35", 2)], [("0.2", 3)]),
        # A lease gave two GPUs back: the exhausted offer is in both books again.
        (report("o7", left=2), [("0.35", 2), ("0.38", 2)], [("0.2", 3), ("0.22", 2)]),
    ]
    for step, on_demand, interruptible in steps:
        sent = await quotes_after(unit, step)
        assert (levels(sent[ON_DEMAND]), levels(sent[INTERRUPTIBLE])) == (
            eur(*on_demand),
            eur(*interruptible),
        )
    await assert_read_model_is_current(unit)


async def test_the_interruptible_leg_can_be_the_best_ask_of_its_book(
    unit: MemoryPricingUnitOfWork,
) -> None:
    await accept(unit, "o4", "o7")
    sent = await quotes_after(unit, report("o7"))
    best = sent[INTERRUPTIBLE].best
    assert best is not None
    assert (best.offer_id, best.price, best.gpus) == ("o7", Decimal("0.22"), 3)
    assert best_id(sent[ON_DEMAND]) == "o7"
    # The pool sold out, then o4 arrives: o4 is the interruptible book's best, o7 is in none.
    sent = await quotes_after(unit, report("o7", "exhausted", 0), report("o4"))
    assert (best_id(sent[INTERRUPTIBLE]), best_id(sent[ON_DEMAND])) == ("o4", None)
    sent = await quotes_after(unit, report("o7", left=3))
    assert (best_id(sent[INTERRUPTIBLE]), best_id(sent[ON_DEMAND])) == ("o4", "o7")


async def test_a_new_interruptible_price_reaches_the_book_with_the_next_report(
    unit: MemoryPricingUnitOfWork, clock: ManualClock
) -> None:
    await accept(unit, "o2")
    await quotes_after(unit, report("o2"))
    change = OfferChangeRequested(
        offer_id="o2",
        seller_id="s1",
        gpu=GPU,
        interruptible_price_per_gpu_hour=Decimal("0.30"),
    )
    await apply(unit, OFFERS_COMMANDS, [event(change, producer="gateway")])
    # The book takes revision 2, then reports the offer: now in both books.
    sent = await quotes_after(unit, report("o2", left=1))
    assert levels(sent[ON_DEMAND]) == eur(("0.35", 1))
    assert levels(sent[INTERRUPTIBLE]) == eur(("0.3", 1))
    await assert_read_model_is_current(unit)


async def test_another_process_loads_both_books_of_a_two_price_offer_from_the_store(
    unit: MemoryPricingUnitOfWork, clock: ManualClock
) -> None:
    await accept(unit, "o4", "o7")
    await quotes_after(unit, report("o4"), report("o7", left=2))
    other = MemoryPricingUnitOfWork(
        clock=clock, band_for=PricingSettings().band_for, state=unit.state, cache=BookCache()
    )
    since = len(other.published)
    await apply(other, OFFERS_STATUS, [report("o4", left=1)])
    sent = {key_of(q): q for q in best_asks(other, since)}
    assert levels(sent[INTERRUPTIBLE]) == eur(("0.2", 1), ("0.22", 2))  # o7's leg from the store


ids = st.sampled_from([o[0] for o in OFFERS])
reports = st.builds(
    lambda offer_id, status, left: (offer_id, status, left),
    ids,
    st.sampled_from(["live", "live", "live", "exhausted", "withdrawn", "expired"]),
    st.integers(0, 8),
)
batches = st.lists(st.lists(reports, min_size=1, max_size=8), min_size=1, max_size=8)


async def _run(plan: list[list[tuple[str, str, int]]]) -> None:
    unit = MemoryPricingUnitOfWork(
        clock=ManualClock(datetime(2026, 11, 29, 12, tzinfo=UTC)),
        band_for=PricingSettings().band_for,
    )
    unit.state.gpus[GPU] = "RTX 4090"
    await apply(unit, FX_RATES, [event(r, producer="pricing") for r in _rates()])
    await accept(unit, *(o[0] for o in OFFERS))
    last: dict[str, BestAskChanged] = {}
    for batch in plan:
        since = len(unit.published)
        await apply(unit, OFFERS_STATUS, [report(o, s, left) for o, s, left in batch])
        sent = best_asks(unit, since)
        keys = [key_of(q) for q in sent]
        assert len(keys) == len(set(keys))  # at most one per quote and unit
        for quote in sent:
            assert not same_state(quote, last.get(key_of(quote)))  # only changes
            last[key_of(quote)] = quote
        await assert_read_model_is_current(unit)


def _rates() -> list[RatePublished]:
    at = datetime(2026, 11, 1, tzinfo=UTC)
    return [
        RatePublished(base=c, quote=Currency.EUR, rate=Decimal(r), as_of=at, source="t")
        for c, r in ((Currency.USD, "0.92"), (Currency.GBP, "1.18"))
    ]


@settings(max_examples=60, deadline=None)
@given(batches)
def test_what_was_sent_last_is_the_quote_from_scratch_however_reports_are_batched(
    plan: list[list[tuple[str, str, int]]],
) -> None:
    asyncio.run(_run(plan))
