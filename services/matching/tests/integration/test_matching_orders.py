"""The matching service's order path: funded orders in from orders.book, fills out.

Offers are published as pricing would (``pricing.offers``), funded orders and cancels as
billing would (``orders.book``); trades (``market.trades``), order statuses
(``orders.status``) and offer statuses (``offers.status``) are read back from Kafka. Each
test uses a GPU model of its own, so the scenarios share one book without meeting.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest

from gpux_contracts.money import Currency
from gpux_contracts.orders import (
    OrderPlaced,
    OrderType,
    TimeInForce,
)
from gpux_contracts.topics import (
    MARKET_BOOK,
    OFFERS_STATUS,
)
from gpux_devinfra.testing.kafka import read_to_end
from gpux_devinfra.testing.services import running
from gpux_matching.bootstrap import SPEC
from gpux_platform.clock import SystemClock
from gpux_platform.settings import GpuxSettings

from .matching_feed import (
    RUN,
    accept,
    cancel,
    fund,
    fund_once_live,
    live,
    offer,
    order,
    orders_until,
    reported,
    trades_of,
)


@pytest.fixture
async def serving(module_settings: GpuxSettings) -> AsyncIterator[GpuxSettings]:
    """The module's settings, with the matching service running for the test."""
    async with running(SPEC, module_settings, **RUN):
        yield module_settings


async def test_a_market_order_takes_the_cheapest_offers_at_their_own_prices(
    serving: GpuxSettings,
) -> None:
    settings = serving
    gpu = "gpu-market"
    cheapest, second, dearer = offer(gpu, "0.30", 4), offer(gpu, "0.32", 4), offer(gpu, "0.50", 4)
    placed = order(gpu, 8, OrderType.MARKET)
    await fund_once_live(settings, [dearer, second, cheapest], placed)
    states = await orders_until(settings, (placed.order_id, "filled", 8, 0, None))
    assert (placed.order_id, "filled", 8, 0, None) in states
    trades = await trades_of(settings, placed.order_id)
    assert [(t.offer_id, t.gpus, t.price_per_gpu_hour) for t in trades] == [
        (cheapest.offer_id, 4, Decimal("0.30")),
        (second.offer_id, 4, Decimal("0.32")),
    ]
    assert all(t.buyer_id == "buyer-1" and t.seller_id == "seller-1" for t in trades)
    assert all(t.currency == "EUR" and t.hours == 2 and t.gpu == gpu for t in trades)
    assert len({t.trade_id for t in trades}) == 2
    offers = await reported(
        settings,
        OFFERS_STATUS,
        lambda s: (second.offer_id, "exhausted") in {(x.offer_id, x.status.value) for x in s},
    )
    ended = {(x.offer_id, x.status.value, x.remaining_gpus) for x in offers}
    assert (cheapest.offer_id, "exhausted", 0) in ended
    assert (second.offer_id, "exhausted", 0) in ended
    assert (dearer.offer_id, "exhausted", 0) not in ended
    # Exhausted is every GPU leased: the offers stay on the book, to come back as leases end.
    pools = {(x.offer_id, x.capacity_gpus, x.leased_gpus) for x in offers if x.remaining_gpus == 0}
    assert {(cheapest.offer_id, 4, 4), (second.offer_id, 4, 4)} <= pools

    # A redelivered funding places nothing twice.
    await fund(settings, placed)
    await asyncio.sleep(1.0)
    assert len(await trades_of(settings, placed.order_id)) == 2


async def test_a_limit_bid_rests_then_fills_when_a_cheaper_offer_arrives(
    serving: GpuxSettings,
) -> None:
    settings = serving
    gpu = "gpu-limit"
    ask = offer(gpu, "0.40", 2)
    placed = order(gpu, 2, OrderType.LIMIT, price="0.35")
    await fund_once_live(settings, [ask], placed)
    states = await orders_until(settings, (placed.order_id, "open", 0, 2, None))
    assert (placed.order_id, "open", 0, 2, None) in states
    assert await trades_of(settings, placed.order_id) == []

    cheaper = offer(gpu, "0.33", 2)
    await accept(settings, cheaper)
    states = await orders_until(settings, (placed.order_id, "filled", 2, 0, None))
    assert (placed.order_id, "filled", 2, 0, None) in states
    trades = await trades_of(settings, placed.order_id)
    # The bid rested, so the trade is at its price.
    assert [(t.offer_id, t.gpus, t.price_per_gpu_hour) for t in trades] == [
        (cheaper.offer_id, 2, Decimal("0.35"))
    ]


async def test_cancel_releases_the_remainder(serving: GpuxSettings) -> None:
    settings = serving
    gpu = "gpu-cancel"
    ask = offer(gpu, "0.25", 1)
    placed = order(gpu, 4, OrderType.LIMIT, price="0.25")
    await fund_once_live(settings, [ask], placed)
    partial = (placed.order_id, "partially_filled", 1, 3, None)
    assert partial in await orders_until(settings, partial)
    await cancel(settings, placed)
    cancelled = (placed.order_id, "cancelled", 1, 0, "cancel_requested")
    assert cancelled in await orders_until(settings, cancelled)
    assert len(await trades_of(settings, placed.order_id)) == 1


async def test_fok_that_cannot_fill_completely_fills_nothing(
    serving: GpuxSettings,
) -> None:
    settings = serving
    gpu = "gpu-fok"
    ask = offer(gpu, "0.20", 2)
    placed = order(gpu, 5, OrderType.LIMIT, price="0.30", time_in_force=TimeInForce.FOK)
    await fund_once_live(settings, [ask], placed)
    killed = (placed.order_id, "cancelled", 0, 0, "fok_unfillable")
    assert killed in await orders_until(settings, killed)
    assert await trades_of(settings, placed.order_id) == []
    offers = await read_to_end(settings, OFFERS_STATUS, OFFERS_STATUS.codec(), "matching")
    assert [x.status.value for x in offers if x.offer_id == ask.offer_id] == ["live"]


def gtd(gpu: str, gpus: int, *, expires_in_s: float) -> OrderPlaced:
    """A limit bid at 0.10, good till ``expires_in_s`` from now (in the past if negative)."""
    expires = SystemClock().now() + timedelta(seconds=expires_in_s)
    return order(
        gpu, gpus, OrderType.LIMIT, "0.10", time_in_force=TimeInForce.GTD, expires_at=expires
    )


async def test_an_expired_gtd_order_leaves_the_book_by_itself(
    serving: GpuxSettings,
) -> None:
    settings = serving
    gpu = "gpu-gtd"
    placed = gtd(gpu, 3, expires_in_s=3)
    late = gtd(gpu, 1, expires_in_s=-1)
    await fund(settings, placed, late)
    rested = (placed.order_id, "open", 0, 3, None)
    assert rested in await orders_until(settings, rested)
    expired = (placed.order_id, "expired", 0, 0, None)
    assert expired in await orders_until(settings, expired)
    # Funded after its time: it never rests.
    too_late = (late.order_id, "expired", 0, 0, "expired_on_arrival")
    assert too_late in await orders_until(settings, too_late)


async def test_a_resting_order_survives_a_restart_and_nothing_is_sent_twice(
    module_settings: GpuxSettings,
) -> None:
    settings = module_settings
    gpu = "gpu-restart"
    placed = order(gpu, 3, OrderType.LIMIT, price="0.60")
    async with running(SPEC, settings, **RUN):
        await fund(settings, placed)
        rested = (placed.order_id, "open", 0, 3, None)
        assert rested in await orders_until(settings, rested)
    async with running(SPEC, settings, **RUN):
        ask = offer(gpu, "0.55", 5)
        await accept(settings, ask)
        filled = (placed.order_id, "filled", 3, 0, None)
        states = await orders_until(settings, filled)
        assert [s for s in states if s[0] == placed.order_id] == [rested, filled]
        trades = await trades_of(settings, placed.order_id)
        assert [(t.offer_id, t.gpus, t.price_per_gpu_hour) for t in trades] == [
            (ask.offer_id, 3, Decimal("0.60"))
        ]
        await live(settings, ask.model_copy(update={"gpus": 2}))


async def book_state(settings: GpuxSettings, gpu: str, check: Callable[[Any], bool]) -> Any:
    """The newest ``book.levels_changed`` of ``gpu|on_demand`` once ``check`` accepts it."""
    seen = await reported(
        settings,
        MARKET_BOOK,
        lambda s: (
            any(x.gpu == gpu for x in s)
            and check(max((x for x in s if x.gpu == gpu), key=lambda x: x.sequence))
        ),
    )
    return max((x for x in seen if x.gpu == gpu), key=lambda x: x.sequence)


def sides(levels: Any) -> tuple[list[tuple[str, int, int]], list[tuple[str, int, int]]]:
    def plain(side: Any) -> list[tuple[str, int, int]]:
        return [(str(level.price), level.gpus, level.orders) for level in side]

    return plain(levels.bids), plain(levels.asks)


async def test_the_book_publishes_its_levels_as_offers_bids_and_fills_change_it(
    serving: GpuxSettings,
) -> None:
    settings = serving
    gpu = "gpu-levels"
    first, second = offer(gpu, "0.40", 2), offer(gpu, "0.40", 3)
    resting = order(gpu, 4, OrderType.LIMIT, price="0.35")
    taker = order(gpu, 4, OrderType.MARKET, price="0.40")
    await accept(settings, first, second)
    levels = await book_state(settings, gpu, lambda x: sum(lv.gpus for lv in x.asks) == 5)
    assert sides(levels) == ([], [("0.40", 5, 2)])
    assert levels.tier == "on_demand"
    assert levels.asks[0].currency == "EUR"
    assert levels.asks[0].prices[Currency.EUR] == Decimal("0.40")

    await fund(settings, resting)
    levels = await book_state(settings, gpu, lambda x: bool(x.bids))
    assert sides(levels) == ([("0.35", 4, 1)], [("0.40", 5, 2)])

    await fund(settings, taker)
    levels = await book_state(settings, gpu, lambda x: sum(lv.gpus for lv in x.asks) == 1)
    assert sides(levels) == ([("0.35", 4, 1)], [("0.40", 1, 1)])
