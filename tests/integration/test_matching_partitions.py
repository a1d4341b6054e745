"""Two matching instances in one consumer group share the book by partition; one stops, the
other takes its partitions over with the same book.

Six GPU models, one per partition of ``pricing.offers`` / ``orders.book``. Both instances run
in-process (``running``) in the same namespace, so they join the group ``matching.book``; the
range assignor gives each three partitions, partition p of both topics to the same instance.
Per GPU: two offers (4 GPUs at 0.30, 4 at 0.35), then a market bid for 8 (fills 4 + 4 at the
offers' prices) and a limit bid for 2 at 0.20 (rests). Each partition's commands are logged
under its own number. Then one instance stops: the other is assigned every partition,
rebuilds the moved ones from their snapshots and logs, and an offer at 0.18 for each GPU fills
the resting bid (at the bid's price, 0.20), on moved partitions as on the others. Every trade
comes exactly once.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections import Counter
from collections.abc import Callable, Sequence
from decimal import Decimal
from typing import Any

import asyncpg

from gpux_contracts.events import EventCodec
from gpux_contracts.ids import new_id
from gpux_contracts.money import Currency
from gpux_contracts.offers import OfferAccepted, OfferStatusChanged, OfferSubmitted
from gpux_contracts.orders import (
    OrderFunded,
    OrderPlaced,
    OrderStatusChanged,
    OrderType,
    TimeInForce,
    TradeExecuted,
)
from gpux_contracts.topics import (
    MARKET_TRADES,
    OFFERS_STATUS,
    ORDERS_BOOK,
    ORDERS_STATUS,
    PRICING_OFFERS,
)
from gpux_devinfra.testing.kafka import publish_payloads, read_to_end
from gpux_devinfra.testing.payloads import offer_submitted, order_placed
from gpux_devinfra.testing.services import running
from gpux_devinfra.testing.waiting import eventually
from gpux_matching.bootstrap import SPEC, wire_partitions
from gpux_matching.domain import partition_of
from gpux_matching.service.partitions import Partitions
from gpux_platform.service import Runtime, Wiring
from gpux_platform.settings import GpuxSettings

EUR = Currency.EUR
PARTITIONS = PRICING_OFFERS.partitions
ALL = list(range(PARTITIONS))
RUN: dict[str, Any] = {"snapshot_every": 4, "expiry_interval_s": 0.2}


def gpus_one_per_partition() -> dict[int, str]:
    """A GPU model name for each partition (as Kafka's default partitioner places its key)."""
    found: dict[int, str] = {}
    suffix = new_id()[:8]
    for i in range(1000):
        gpu = f"part-{suffix}-{i}"
        found.setdefault(partition_of(gpu, PARTITIONS), gpu)
        if len(found) == PARTITIONS:
            return found
    raise AssertionError("no GPU name for some partition")


def offer(gpu: str, price: str, gpus: int) -> OfferSubmitted:
    return offer_submitted(
        new_id(), gpu=gpu, price=price, gpus=gpus, seller_id="seller-1", currency=EUR
    )


def order(gpu: str, gpus: int, kind: OrderType, price: str | None = None) -> OrderPlaced:
    return order_placed(
        gpu=gpu,
        gpus=gpus,
        price=price,
        buyer_id="buyer-1",
        currency=EUR,
        type=kind,
        hours=2,
        time_in_force=TimeInForce.GTC,
    )


async def accept(settings: GpuxSettings, offers: Sequence[OfferSubmitted]) -> None:
    items = [(o.gpu, OfferAccepted(offer=o, revision=1)) for o in offers]
    await publish_payloads(settings, PRICING_OFFERS, "pricing", items)


async def fund(settings: GpuxSettings, orders: Sequence[OrderPlaced]) -> None:
    funded = [
        OrderFunded(order=o, hold_id=new_id(), held=Decimal(100), held_currency=EUR) for o in orders
    ]
    await publish_payloads(settings, ORDERS_BOOK, "billing", [(o.order.gpu, o) for o in funded])


async def until(check: Callable[[], Any], what: str) -> None:
    """Wait for ``check()`` (sync or async) to hold."""
    await eventually(check, what=what, timeout_s=45, interval_s=0.3)


def trades_key(trades: list[TradeExecuted]) -> Counter[tuple[str, str, int, Decimal]]:
    return Counter((t.order_id, t.offer_id, t.gpus, t.price_per_gpu_hour) for t in trades)


class Scenario:
    """Per partition: two offers, a market bid that takes both, a limit bid that rests."""

    def __init__(self) -> None:
        self.gpus = gpus_one_per_partition()
        self.cheap = {p: offer(g, "0.30", 4) for p, g in self.gpus.items()}
        self.dear = {p: offer(g, "0.35", 4) for p, g in self.gpus.items()}
        self.market = {p: order(g, 8, OrderType.MARKET) for p, g in self.gpus.items()}
        self.limit = {p: order(g, 2, OrderType.LIMIT, "0.20") for p, g in self.gpus.items()}

    def expected(self) -> Counter[tuple[str, str, int, Decimal]]:
        """The market bids' trades: 4 + 4 at the offers' prices."""
        expected: Counter[tuple[str, str, int, Decimal]] = Counter()
        for p in ALL:
            expected[(self.market[p].order_id, self.cheap[p].offer_id, 4, Decimal("0.30"))] += 1
            expected[(self.market[p].order_id, self.dear[p].offer_id, 4, Decimal("0.35"))] += 1
        return expected

    def limit_ids(self) -> set[str]:
        return {o.order_id for o in self.limit.values()}


async def trades(settings: GpuxSettings) -> list[TradeExecuted]:
    """Each trade once (an outbox row republished after a stop is an exact copy)."""
    seen = await read_to_end(settings, MARKET_TRADES, EventCodec(TradeExecuted), "matching")
    return list({t.trade_id: t for t in seen}.values())


async def offers_live(settings: GpuxSettings, offers: Sequence[OfferSubmitted]) -> bool:
    statuses = await read_to_end(
        settings, OFFERS_STATUS, EventCodec(OfferStatusChanged), "matching"
    )
    live = {s.offer_id for s in statuses if s.status.value == "live"}
    return {o.offer_id for o in offers} <= live


async def rested(settings: GpuxSettings, order_ids: set[str]) -> bool:
    statuses = await read_to_end(
        settings, ORDERS_STATUS, EventCodec(OrderStatusChanged), "matching"
    )
    return order_ids <= {s.order_id for s in statuses if s.status.value == "open"}


async def trade_on_both(settings: GpuxSettings, scenario: Scenario) -> None:
    """Offers live, then the bids: the market bids fill 4 + 4, the limit bids rest."""
    offers = [*scenario.cheap.values(), *scenario.dear.values()]
    await accept(settings, offers)
    await until(lambda: offers_live(settings, offers), "every offer to be live")
    await fund(settings, [*scenario.market.values(), *scenario.limit.values()])
    expected = scenario.expected()

    async def traded() -> bool:
        return trades_key(await trades(settings)) == expected

    await until(traded, "the market bids to fill 4 + 4")
    await until(lambda: rested(settings, scenario.limit_ids()), "the limit bids to rest")


async def each_partition_logs_its_own(settings: GpuxSettings, gpus: dict[int, str]) -> None:
    """Each partition's commands are in its own log."""
    conn = await asyncpg.connect(settings.database_url.get_secret_value())
    try:
        for p, gpu in gpus.items():
            rows = await conn.fetch(
                "SELECT DISTINCT partition FROM matching.commands WHERE body->>'gpu' = $1",
                gpu,
            )
            assert [r["partition"] for r in rows] == [p]
    finally:
        await conn.close()


async def fill_the_resting_bids(
    settings: GpuxSettings, scenario: Scenario, moved: list[int]
) -> None:
    """An offer at 0.18 per GPU fills each resting bid at its price; every trade once."""
    await accept(settings, [offer(g, "0.18", 2) for g in scenario.gpus.values()])
    by_limit = scenario.limit_ids()

    async def filled_rest() -> bool:
        got = [t for t in await trades(settings) if t.order_id in by_limit]
        return {t.order_id for t in got} == by_limit

    await until(filled_rest, "the resting bids to fill on every partition")
    final = await trades(settings)
    by_order = {t.order_id: t for t in final}
    for p in ALL:
        t = by_order[scenario.limit[p].order_id]
        assert (t.gpus, t.price_per_gpu_hour) == (2, Decimal("0.20")), (p, p in moved)
    # Exactly once: 2 trades per market bid and 1 per limit bid, nothing else.
    assert len(final) == 3 * PARTITIONS
    assert trades_key([t for t in final if t.order_id not in by_limit]) == scenario.expected()


async def test_two_instances_share_the_book_and_one_takes_over_when_the_other_stops(
    own_settings: GpuxSettings,
) -> None:
    settings = own_settings  # a database and groups of this try's own: a rerun starts afresh
    books: list[Partitions] = []

    async def wire(runtime: Runtime) -> Wiring:
        book, wiring = await wire_partitions(runtime)
        books.append(book)
        return wiring

    spec = dataclasses.replace(SPEC, wire=wire)
    scenario = Scenario()
    async with contextlib.AsyncExitStack() as stack:
        await stack.enter_async_context(running(spec, settings, **RUN))
        second = contextlib.AsyncExitStack()
        await second.enter_async_context(running(spec, settings, **RUN))
        first_book, second_book = books

        # One group, two members: each holds its share, together every partition, once.
        def shared() -> bool:
            a, b = set(first_book.owned()), set(second_book.owned())
            return bool(a) and bool(b) and not a & b and a | b == set(ALL)

        await until(shared, "both instances to hold partitions")
        moved = second_book.owned()
        await trade_on_both(settings, scenario)
        await each_partition_logs_its_own(settings, scenario.gpus)

        # The second instance stops: the first takes its partitions over with their books.
        await second.aclose()
        await until(lambda: first_book.owned() == ALL, "the first instance to hold all")
        await fill_the_resting_bids(settings, scenario, moved)
