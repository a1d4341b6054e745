"""Orders on the book, through the memory unit of work: funded, filled, cancelled, halted."""

from __future__ import annotations

from decimal import Decimal

import pytest

from gpux_contracts.ids import stable_id
from gpux_contracts.market import ALL_GPUS, HALTED_REASON, MarketState
from gpux_contracts.orders import OrderStatusChanged, TradeExecuted
from gpux_contracts.topics import MARKET_TRADES, ORDERS_STATUS
from gpux_matching.domain import AddOffer, CancelOrder, PlaceOrder

from .matching_desk import Desk

pytestmark = pytest.mark.unit

Status = tuple[str, str, int, int, str | None]


def statuses(desk: Desk) -> list[Status]:
    seen: list[OrderStatusChanged] = desk.published(ORDERS_STATUS)
    return [(s.order_id, s.status.value, s.filled_gpus, s.remaining_gpus, s.reason) for s in seen]


def trades(desk: Desk) -> list[tuple[str, str, int, Decimal]]:
    seen: list[TradeExecuted] = desk.published(MARKET_TRADES)
    return [(t.order_id, t.offer_id, t.gpus, t.price_per_gpu_hour) for t in seen]


async def test_a_market_order_takes_the_cheapest_offers_at_their_own_prices(desk: Desk) -> None:
    cheap, dear = desk.offer("0.30", 2), desk.offer("0.35", 4)
    await desk.offers(desk.accepted(dear), desk.accepted(cheap))
    order = desk.order(5)
    funded = desk.funded(order)
    outcome = await desk.orders(funded)
    assert outcome.applied == 1
    assert trades(desk) == [
        (order.order_id, cheap.offer_id, 2, Decimal("0.30")),
        (order.order_id, dear.offer_id, 3, Decimal("0.35")),
    ]
    assert statuses(desk) == [(order.order_id, "filled", 5, 0, None)]
    # Event ids derive from the input, so a replay of it writes the same rows.
    trade_ids = [m.envelope.event_id for m in desk.uow.published if m.topic is MARKET_TRADES]
    assert trade_ids == [
        stable_id(funded.event_id, "trade", f"{order.order_id}:b{n}") for n in (1, 2)
    ]
    assert all(m.envelope.causation_id == funded.event_id for m in desk.uow.published[-4:])


async def test_a_funding_comes_once_even_when_redelivered_or_sent_again(desk: Desk) -> None:
    await desk.offers(desk.accepted(desk.offer("0.30", 10)))
    order = desk.order(2)
    funded = desk.funded(order)
    await desk.orders(funded)
    again = await desk.orders(funded, desk.funded(order))  # the same event, and a new one
    assert (again.duplicate, again.applied) == (1, 1)
    assert [type(c) for c in desk.logged()] == [AddOffer, PlaceOrder]
    assert len(trades(desk)) == 1


async def test_a_limit_bid_rests_then_is_cancelled(desk: Desk) -> None:
    order, never = desk.order(3, "0.20"), desk.order(1, "0.20")
    await desk.orders(desk.funded(order))
    await desk.orders(desk.cancel(order), desk.cancel(never))
    assert [type(c) for c in desk.logged()] == [PlaceOrder, CancelOrder]
    assert statuses(desk) == [
        (order.order_id, "open", 0, 3, None),
        (order.order_id, "cancelled", 0, 0, "cancel_requested"),
    ]
    assert desk.partition.engine.order(order.order_id) is None


async def test_a_halted_gpu_rejects_its_funded_orders_in_their_place(desk: Desk) -> None:
    await desk.sessions(desk.session("h100", MarketState.HALTED))
    before, refused, after = (
        desk.order(1, "0.20", gpu="a100"),
        desk.order(2),
        desk.order(1, "0.21", gpu="a100"),
    )
    await desk.orders(desk.funded(before), desk.funded(refused), desk.funded(after))
    placed = [c.order_id for c in desk.logged() if isinstance(c, PlaceOrder)]
    assert placed == [before.order_id, after.order_id]
    # The rejection sits between the two placed orders' statuses, as the inputs came; the
    # books' levels follow once each, at the unit's end.
    assert statuses(desk) == [
        (before.order_id, "open", 0, 1, None),
        (refused.order_id, "rejected", 0, 2, HALTED_REASON),
        (after.order_id, "open", 0, 1, None),
    ]
    kinds = [type(m.envelope.payload).__name__ for m in desk.uow.published]
    book = ["BookLevelsChanged"] * 2  # a bid for any tier shows in both books
    assert kinds == ["OrderStatusChanged"] * 3 + book
    assert desk.uow.state.orders[refused.order_id] == ("buyer-1", "h100")


async def test_a_halted_market_rejects_every_gpu_and_each_order_once(desk: Desk) -> None:
    await desk.sessions(desk.session(ALL_GPUS, MarketState.HALTED, desk.clock.now()))
    desk.later(1)
    await desk.sessions(desk.session("a100", MarketState.OPEN))
    placed = desk.order(1, "0.20", gpu="a100")
    refused = desk.order(2)
    funded = desk.funded(refused)
    await desk.orders(desk.funded(placed), funded, funded)
    # The whole market is halted: the a100's own open state does not reopen it.
    assert desk.logged() == []
    assert statuses(desk) == [
        (placed.order_id, "rejected", 0, 1, HALTED_REASON),
        (refused.order_id, "rejected", 0, 2, HALTED_REASON),
    ]
