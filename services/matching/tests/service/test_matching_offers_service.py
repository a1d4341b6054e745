"""Offers on the book, through the memory unit of work: accepted, changed, withdrawn."""

from __future__ import annotations

from decimal import Decimal

import pytest

from gpux_contracts.book import BookLevelsChanged
from gpux_contracts.money import Currency
from gpux_contracts.offers import DEFAULT_NOTICE_SECONDS, OfferStatusChanged, Tier
from gpux_contracts.topics import MARKET_BOOK, OFFERS_STATUS
from gpux_matching.domain import AddOffer, ChangeOffer, WithdrawOffer
from gpux_matching.service.partition import NotYetError

from .matching_desk import Desk

pytestmark = pytest.mark.unit


def statuses(desk: Desk) -> list[tuple[str, str, int]]:
    seen: list[OfferStatusChanged] = desk.published(OFFERS_STATUS)
    return [(s.offer_id, s.status.value, s.remaining_gpus) for s in seen]


async def test_an_accepted_offer_goes_live_on_the_book(desk: Desk) -> None:
    offer = desk.offer("0.40", 4)
    outcome = await desk.offers(desk.accepted(offer))
    assert (outcome.applied, outcome.units) == (1, 1)
    assert desk.partition.engine.offer(offer.offer_id) is not None
    assert [type(c) for c in desk.logged()] == [AddOffer]
    assert statuses(desk) == [(offer.offer_id, "live", 4)]
    (status,) = desk.published(OFFERS_STATUS)
    assert (status.capacity_gpus, status.leased_gpus) == (4, 0)
    (levels,) = desk.published(MARKET_BOOK)
    assert isinstance(levels, BookLevelsChanged)
    assert [(str(lv.price), lv.gpus) for lv in levels.asks] == [("0.40", 4)]
    assert levels.sequence == desk.uow.state.heads[0]
    assert desk.uow.state.offers[offer.offer_id] == ("seller-1", "h100", 1)


async def test_a_redelivered_offer_changes_nothing(desk: Desk) -> None:
    accepted = desk.accepted(desk.offer())
    await desk.offers(accepted)
    before = list(desk.uow.published)
    again = await desk.offers(accepted)
    assert (again.applied, again.duplicate) == (0, 1)
    assert desk.uow.published == before
    assert len(desk.logged()) == 1


async def test_a_later_revision_changes_the_offer_and_an_older_one_nothing(desk: Desk) -> None:
    offer = desk.offer("0.40", 4)
    await desk.offers(desk.accepted(offer))
    changed = offer.model_copy(update={"gpus": 3})
    await desk.offers(desk.accepted(changed, revision=3))
    await desk.offers(desk.accepted(offer.model_copy(update={"gpus": 9}), revision=2))
    assert [type(c) for c in desk.logged()] == [AddOffer, ChangeOffer]
    assert statuses(desk) == [(offer.offer_id, "live", 4), (offer.offer_id, "live", 3)]
    assert desk.uow.state.offers[offer.offer_id][2] == 3


async def test_a_revision_of_an_offer_the_book_never_had_changes_nothing(desk: Desk) -> None:
    outcome = await desk.offers(desk.accepted(desk.offer(), revision=2))
    assert outcome.applied == 1
    assert desk.logged() == []
    assert desk.uow.published == []


async def test_a_withdrawal_takes_the_offer_off_and_one_of_no_offer_does_nothing(
    desk: Desk,
) -> None:
    offer, never = desk.offer(), desk.offer()
    await desk.offers(desk.accepted(offer))
    await desk.offers(desk.withdrawn(offer), desk.withdrawn(never))
    assert [type(c) for c in desk.logged()] == [AddOffer, WithdrawOffer]
    assert statuses(desk)[-1] == (offer.offer_id, "withdrawn", 0)
    assert desk.partition.engine.offer(offer.offer_id) is None


async def test_an_offer_in_a_currency_without_a_rate_waits_with_nothing_applied(
    desk: Desk,
) -> None:
    first, usd = desk.offer(), desk.offer(currency=Currency.USD)
    with pytest.raises(NotYetError):
        await desk.offers(desk.accepted(first), desk.accepted(usd))
    assert desk.logged() == []
    assert desk.uow.inbox == set()
    assert desk.uow.state.offers == {}
    # The engine took the first offer before the second failed: it was rebuilt.
    assert desk.partition.engine.offer(first.offer_id) is None


async def test_a_batch_of_offers_is_one_unit_logged_in_order(desk: Desk) -> None:
    offers = [desk.offer(f"0.{40 + i}", 1 + i) for i in range(5)]
    outcome = await desk.offers(*(desk.accepted(o) for o in offers))
    assert (outcome.applied, outcome.units, desk.uow.commits) == (5, 1, 1)
    logged = desk.logged()
    assert [c.offer_id for c in logged if isinstance(c, AddOffer)] == [o.offer_id for o in offers]
    seqs = [seq for seq, *_ in desk.uow.state.commands]
    assert seqs == sorted(seqs)
    # Each command's status in its place, then the book's levels once, as the unit left them.
    kinds = [type(m.envelope.payload).__name__ for m in desk.uow.published]
    assert kinds == ["OfferStatusChanged"] * 5 + ["BookLevelsChanged"]
    (levels,) = desk.published(MARKET_BOOK)
    assert levels.sequence == seqs[-1]
    assert [(str(lv.price), lv.gpus) for lv in levels.asks] == [
        (f"0.{40 + i}", 1 + i) for i in range(5)
    ]


async def test_an_offer_brings_its_interruptible_price_and_notice_and_a_change_its_new_price(
    desk: Desk,
) -> None:
    offer = desk.offer(
        "0.50",
        4,
        interruptible_price_per_gpu_hour=Decimal("0.20"),
        interruption_notice_seconds=300,
    )
    await desk.offers(desk.accepted(offer))
    (added,) = desk.logged()
    assert isinstance(added, AddOffer)
    assert (added.price_micros, added.interruptible_price_micros, added.notice_s) == (
        500_000,
        200_000,
        300,
    )
    changed = offer.model_copy(update={"interruptible_price_per_gpu_hour": Decimal("0.25")})
    await desk.offers(desk.accepted(changed, revision=2))
    assert desk.logged()[-1] == ChangeOffer(
        now=added.now,
        offer_id=offer.offer_id,
        price_micros=500_000,
        gpus=4,
        interruptible_price_micros=250_000,
    )
    # One pool, two legs: the same four GPUs in the on-demand and the interruptible book.
    books = {
        (b.tier.value, tuple((str(lv.price), lv.gpus) for lv in b.asks))
        for b in desk.published(MARKET_BOOK)
    }
    assert ("on_demand", (("0.50", 4),)) in books
    assert ("interruptible", (("0.25", 4),)) in books
    assert statuses(desk)[-1] == (offer.offer_id, "live", 4)


async def test_an_offer_from_before_capacity_is_one_tier_with_the_default_notice(
    desk: Desk,
) -> None:
    await desk.offers(desk.accepted(desk.offer("0.40", 2, tier=Tier.INTERRUPTIBLE)))
    (added,) = desk.logged()
    assert isinstance(added, AddOffer)
    assert (added.tier, added.interruptible_price_micros, added.notice_s) == (
        "interruptible",
        None,
        DEFAULT_NOTICE_SECONDS,
    )
