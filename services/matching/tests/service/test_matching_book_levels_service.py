"""Book levels conflated per unit of work, through the memory unit of work: one
``book.levels_changed`` per book a unit changed, with its levels as the unit left them and
the sequence of the unit's last command that changed it; unchanged levels are not published
again; a replayed unit publishes the same event ids."""

from __future__ import annotations

from collections import Counter
from decimal import Decimal
from typing import Any

import pytest

from gpux_contracts.book import BookLevelsChanged, book_key
from gpux_contracts.ids import stable_id
from gpux_contracts.orders import OrderPlaced, OrderStatusChanged, OrderTier
from gpux_contracts.topics import MARKET_BOOK, MARKET_TRADES, ORDERS_BOOK, ORDERS_STATUS
from gpux_matching.domain import PlaceOrder
from gpux_matching.service import ORDER_HANDLERS
from gpux_platform.unit_of_work import MemoryUnitOfWork

from .matching_desk import GPU, Desk

pytestmark = pytest.mark.unit

N = 50


def bids(desk: Desk, count: int, gpu: str = GPU) -> list[OrderPlaced]:
    """Limit bids of one book (``gpu|on_demand``) that rest: a few prices, many sizes."""
    return [
        desk.order(1 + i % 3, f"0.{20 + i % 7}", gpu=gpu, tier=OrderTier.ON_DEMAND)
        for i in range(count)
    ]


def levels_of(levels: BookLevelsChanged) -> list[tuple[str, int, int]]:
    return [(str(level.price), level.gpus, level.orders) for level in levels.bids]


def expected_bids(orders: list[OrderPlaced]) -> list[tuple[str, int, int]]:
    """Bids aggregated by price, best (highest) first, as computed here independently."""
    gpus: Counter[Decimal] = Counter()
    count: Counter[Decimal] = Counter()
    for order in orders:
        price = order.max_price_per_gpu_hour
        assert price is not None
        gpus[price] += order.gpus
        count[price] += 1
    return [(str(price), gpus[price], count[price]) for price in sorted(gpus, reverse=True)]


def book_records(desk: Desk) -> list[tuple[str, str, int]]:
    """(key, event id, sequence) of every ``market.book`` record published, in order."""
    return [
        (m.key, m.envelope.event_id, m.envelope.payload.sequence)
        for m in desk.uow.published
        if m.topic is MARKET_BOOK
    ]


def last_seq(desk: Desk) -> int:
    seq: int = desk.uow.state.heads[desk.partition.number]
    return seq


async def test_a_unit_of_many_orders_on_one_book_publishes_its_levels_once(desk: Desk) -> None:
    orders = bids(desk, N)
    funded = [desk.funded(o) for o in orders]
    outcome = await desk.orders(*funded)
    assert (outcome.applied, outcome.units) == (N, 1)
    assert [type(c) for c in desk.logged()] == [PlaceOrder] * N
    # Every order's status, one per change, in input order; then the book's levels once.
    seen: list[OrderStatusChanged] = desk.published(ORDERS_STATUS)
    assert [(s.order_id, s.status.value) for s in seen] == [(o.order_id, "open") for o in orders]
    kinds = [type(m.envelope.payload).__name__ for m in desk.uow.published]
    assert kinds == ["OrderStatusChanged"] * N + ["BookLevelsChanged"]
    (levels,) = desk.published(MARKET_BOOK)
    assert (levels.gpu, levels.tier) == (GPU, "on_demand")
    assert levels_of(levels) == expected_bids(orders)
    assert levels.asks == []
    assert levels.sequence == last_seq(desk)  # the last command that changed the book
    # Its id derives from that command's cause, the unit's last input.
    (record,) = [m for m in desk.uow.published if m.topic is MARKET_BOOK]
    key = book_key(GPU, "on_demand")
    assert record.key == key
    assert record.envelope.event_id == stable_id(funded[-1].event_id, "book", key)
    assert record.envelope.causation_id == funded[-1].event_id


async def test_a_unit_touching_two_books_publishes_each_once_at_its_last_change(
    desk: Desk,
) -> None:
    first, second = bids(desk, 3), bids(desk, 4, gpu="a100")
    # Interleaved: the h100's last change comes before the a100's.
    inputs = [first[0], second[0], first[1], second[1], first[2], second[2], second[3]]
    await desk.orders(*(desk.funded(o) for o in inputs))
    seqs = [seq for seq, *_ in desk.uow.state.commands]
    records = book_records(desk)
    assert [(key, seq) for key, _, seq in records] == [
        (book_key(GPU, "on_demand"), seqs[4]),
        (book_key("a100", "on_demand"), seqs[6]),
    ]
    h100, a100 = desk.published(MARKET_BOOK)
    assert levels_of(h100) == expected_bids(first)
    assert levels_of(a100) == expected_bids(second)


async def test_a_unit_that_fails_at_commit_and_comes_again_publishes_the_same_ids(
    desk: Desk, monkeypatch: pytest.MonkeyPatch
) -> None:
    await desk.offers(desk.accepted(desk.offer("0.30", 3)))
    funded = [desk.funded(o) for o in bids(desk, 5)] + [desk.funded(desk.order(2))]
    attempted: list[list[tuple[str, str]]] = []
    commit = MemoryUnitOfWork.commit

    async def failing_once(self: MemoryUnitOfWork) -> None:
        if not attempted:
            attempted.append([(m.key, m.envelope.event_id) for m in self.outbox.messages])
            raise OSError("the database went away")  # transient: the batch comes again
        await commit(self)

    monkeypatch.setattr(MemoryUnitOfWork, "commit", failing_once)
    before = len(desk.uow.published)
    with pytest.raises(OSError, match="went away"):
        await desk.orders(*funded)
    assert len(desk.uow.published) == before
    await desk.orders(*funded)
    again = [(m.key, m.envelope.event_id) for m in desk.uow.published[before:]]
    assert again == attempted[0]
    assert len(desk.published(MARKET_TRADES)) == 1
    # The offer's unit, then this one's: the bids and what the market order left of the ask.
    assert [key for key, *_ in book_records(desk)] == [book_key(GPU, "on_demand")] * 2
    levels = desk.published(MARKET_BOOK)[-1]
    assert [(str(lv.price), lv.gpus) for lv in levels.asks] == [("0.30", 1)]
    assert len(levels.bids) == 5


async def test_the_same_inputs_on_another_instance_publish_the_same_book_ids() -> None:
    one, other = Desk(), Desk()
    await one.partition.recover()
    await other.partition.recover()
    inputs: list[Any] = [one.funded(o) for o in bids(one, 10)]
    inputs.append(one.cancel(inputs[3].payload.order))
    for desk in (one, other):
        await desk.orders(*inputs)
    assert book_records(one) == book_records(other)
    assert len(book_records(one)) == 1


async def test_a_book_left_as_it_was_published_is_not_published_again(desk: Desk) -> None:
    resting, passing = bids(desk, 2)
    await desk.orders(desk.funded(resting))
    assert len(book_records(desk)) == 1
    # A bid placed and cancelled in one unit leaves the book as published: statuses only.
    await desk.orders(desk.funded(passing), desk.cancel(passing))
    seen: list[OrderStatusChanged] = desk.published(ORDERS_STATUS)
    assert [s.status.value for s in seen] == ["open", "open", "cancelled"]
    assert len(book_records(desk)) == 1
    # A change is published again, with the sequence of the command that made it.
    await desk.orders(desk.cancel(resting))
    first = desk.uow.state.commands[0][0]
    assert [seq for *_, seq in book_records(desk)] == [first, last_seq(desk)]
    assert desk.published(MARKET_BOOK)[-1].bids == []


async def test_a_rebuilt_partition_publishes_the_books_its_first_unit_changes(
    desk: Desk,
) -> None:
    resting, passing = bids(desk, 2)
    await desk.orders(desk.funded(resting))
    again = desk.new_partition()
    await again.recover()  # another instance may have published since: it forgets
    inputs = [desk.funded(passing), desk.cancel(passing)]
    await again.consume(ORDERS_BOOK, inputs, ORDER_HANDLERS)
    records = book_records(desk)
    assert len(records) == 2
    first, second = desk.published(MARKET_BOOK)
    assert levels_of(second) == levels_of(first) == expected_bids([resting])
    assert second.sequence == last_seq(desk)
