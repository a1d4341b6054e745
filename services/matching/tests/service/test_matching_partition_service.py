"""One partition's engine, log and snapshots on the memory store: units, rebuilds, fences,
the book's own commands, and a batch with a record that never applies."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest

from gpux_contracts.fx import RatePublished
from gpux_contracts.money import Currency
from gpux_contracts.offers import OfferStatusChanged
from gpux_contracts.topics import MARKET_BOOK, OFFERS_STATUS, PRICING_OFFERS
from gpux_matching.domain import AddOffer, Expire, SetFx, WithdrawOffer
from gpux_matching.service import OFFER_HANDLERS
from gpux_matching.service.fx import fx_rates
from gpux_matching.service.partitions import Partitions

from .matching_desk import Desk

pytestmark = pytest.mark.unit


async def test_a_unit_that_reaches_snapshot_every_stores_one_snapshot_at_its_last_command() -> None:
    desk = Desk(snapshot_every=3)
    await desk.partition.recover()
    await desk.offers(*(desk.accepted(desk.offer(gpus=1 + i)) for i in range(5)))
    last = desk.uow.state.heads[0]
    assert desk.store.writers[0].stored == [last]
    # A partition rebuilt from that snapshot (and the log after it) is the same book.
    again = desk.new_partition()
    await again.recover()
    assert again.engine.snapshot() == desk.partition.engine.snapshot()


async def test_a_rebuild_replays_the_log_after_the_newest_snapshot() -> None:
    desk = Desk(snapshot_every=2)
    await desk.partition.recover()
    offers = [desk.offer(gpus=2) for _ in range(3)]
    for offer in offers:
        await desk.offers(desk.accepted(offer))
    await desk.offers(desk.withdrawn(offers[0]))
    again = desk.new_partition()
    await again.recover()
    assert again.engine.snapshot() == desk.partition.engine.snapshot()
    assert again.engine.offer(offers[0].offer_id) is None


async def test_a_stale_engine_is_fenced_off_rebuilt_and_applies_to_the_real_book(
    desk: Desk,
) -> None:
    stale = desk.new_partition()
    await stale.recover()  # built before the other one logs anything
    offer = desk.offer()
    await desk.offers(desk.accepted(offer))
    assert stale.engine.offer(offer.offer_id) is None
    outcome = await stale.consume(PRICING_OFFERS, [desk.withdrawn(offer)], OFFER_HANDLERS)
    assert outcome.applied == 1
    assert [type(c) for c in desk.logged()] == [AddOffer, WithdrawOffer]
    assert stale.engine.offer(offer.offer_id) is None


async def test_a_record_that_never_applies_is_set_aside_and_the_rest_apply_once(
    desk: Desk,
) -> None:
    good = [desk.offer(gpus=1 + i) for i in range(6)]
    bad = desk.offer(price="0.1234567")  # more decimals than money has: the handler fails
    events = [desk.accepted(o) for o in good[:3]] + [desk.accepted(bad)]
    events += [desk.accepted(o) for o in good[3:]]
    outcome = await desk.offers(*events)
    assert (outcome.applied, outcome.set_aside) == (6, 1)
    assert [e[1] for e in desk.uow.set_aside_events] == [events[3].event_id]
    added = [c.offer_id for c in desk.logged() if isinstance(c, AddOffer)]
    assert added == [o.offer_id for o in good]
    assert desk.partition.engine.offer(bad.offer_id) is None
    rebuilt = desk.new_partition()
    await rebuilt.recover()
    assert rebuilt.engine.snapshot() == desk.partition.engine.snapshot()
    replay = await desk.offers(*events)
    assert (replay.applied, replay.duplicate) == (0, 7)


async def test_expiry_is_logged_only_when_something_expired(desk: Desk) -> None:
    until = desk.clock.now() + timedelta(seconds=10)
    offer = desk.offer(available_until=until)
    await desk.offers(desk.accepted(offer))
    await desk.partition.tick()
    assert [type(c) for c in desk.logged()] == [AddOffer]
    desk.later(11)
    await desk.partition.tick()
    assert [type(c) for c in desk.logged()] == [AddOffer, Expire]
    seen: list[OfferStatusChanged] = desk.published(OFFERS_STATUS)
    assert [(s.status.value, s.remaining_gpus) for s in seen] == [("live", 4), ("expired", 0)]
    # The book's own command: its events are caused by the command, not by an input.
    assert desk.uow.published[-1].envelope.causation_id == f"matching-command-{1 + 1}"


async def test_a_new_rate_is_logged_once_and_republishes_the_books(desk: Desk) -> None:
    await desk.offers(desk.accepted(desk.offer()))
    rate = RatePublished(
        base=Currency.USD,
        quote=Currency.EUR,
        rate=Decimal("0.92"),
        as_of=desk.clock.now(),
        source="test",
    )
    rates = fx_rates(rate)
    assert rates == {"USD": Decimal("920000.00")}
    await desk.partition.set_rates(rates)
    await desk.partition.set_rates(rates)
    assert [type(c) for c in desk.logged()] == [AddOffer, SetFx]
    books = desk.published(MARKET_BOOK)
    assert len(books) == 1 + 2  # the offer's book, then both books of the GPU after the rate
    on_demand, interruptible = books[1:]
    assert on_demand.asks[0].prices[Currency.USD] == Decimal("0.434783")  # 0.40 / 0.92
    assert interruptible.asks == []


async def test_partitions_rebuild_what_they_are_given_and_apply_what_they_do_not_hold(
    desk: Desk,
) -> None:
    offer = desk.offer()
    await desk.offers(desk.accepted(offer))
    held = Partitions(desk.store, desk.clock, snapshot_every=100, partitions=6)
    await held.assign({0, 3})
    assert held.owned() == [0, 3]
    assert held.partition(0).engine.offer(offer.offer_id) is not None
    await held.revoke({0})
    assert held.owned() == [3]
    # A record of a partition it no longer holds: a throwaway engine applies it, fenced.
    outcome = await held.consume(0, PRICING_OFFERS, [desk.withdrawn(offer)], OFFER_HANDLERS)
    assert outcome.applied == 1
    assert [type(c) for c in desk.logged()] == [AddOffer, WithdrawOffer]
    assert held.owned() == [3]
