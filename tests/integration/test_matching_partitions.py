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

import asyncio
import contextlib
import dataclasses
from collections import Counter
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

import asyncpg

from gpux_contracts.events import EventCodec
from gpux_contracts.ids import new_id
from gpux_contracts.money import Currency
from gpux_contracts.offers import (
    BillingGranularity,
    OfferAccepted,
    OfferStatusChanged,
    OfferSubmitted,
    Tier,
)
from gpux_contracts.orders import (
    OrderFunded,
    OrderPlaced,
    OrderStatusChanged,
    OrderTier,
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
from gpux_devinfra.testing.services import running
from gpux_matching.book import Book
from gpux_matching.bootstrap import SPEC, wire_book
from gpux_matching.partition import partition_of
from gpux_platform.service import Runtime, Wiring
from gpux_platform.settings import GpuxSettings

PARTITIONS = PRICING_OFFERS.partitions
ALL = list(range(PARTITIONS))
RUN = {"snapshot_every": 4, "expiry_interval_s": 0.2}


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
    return OfferSubmitted(
        offer_id=new_id(),
        seller_id="seller-1",
        gpu=gpu,
        gpus=gpus,
        price_per_gpu_hour=Decimal(price),
        currency=Currency("EUR"),
        tier=Tier.ON_DEMAND,
        billing=BillingGranularity.HOUR,
    )


def order(gpu: str, gpus: int, kind: OrderType, price: str | None = None) -> OrderPlaced:
    return OrderPlaced(
        order_id=new_id(),
        buyer_id="buyer-1",
        gpu=gpu,
        gpus=gpus,
        type=kind,
        max_price_per_gpu_hour=None if price is None else Decimal(price),
        currency=Currency("EUR"),
        tier=OrderTier.ANY,
        hours=2,
        time_in_force=TimeInForce.GTC,
        expires_at=None,
    )


async def accept(settings: GpuxSettings, offers: Sequence[OfferSubmitted]) -> None:
    items = [(o.gpu, OfferAccepted(offer=o, revision=1)) for o in offers]
    await publish_payloads(settings, PRICING_OFFERS, "pricing", items)


async def fund(settings: GpuxSettings, orders: Sequence[OrderPlaced]) -> None:
    items = [
        (
            o.gpu,
            OrderFunded(
                order=o, hold_id=new_id(), held=Decimal("100"), held_currency=Currency("EUR")
            ),
        )
        for o in orders
    ]
    await publish_payloads(settings, ORDERS_BOOK, "billing", items)


async def until(check: Any, what: str, timeout_s: float = 45) -> None:
    """Wait for ``check()`` (sync or async) to hold."""
    deadline = asyncio.get_running_loop().time() + timeout_s
    while True:
        ok = check()
        if asyncio.iscoroutine(ok):
            ok = await ok
        if ok:
            return
        assert asyncio.get_running_loop().time() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.3)


def trades_key(trades: list[TradeExecuted]) -> Counter[tuple[str, str, int, Decimal]]:
    return Counter((t.order_id, t.offer_id, t.gpus, t.price_per_gpu_hour) for t in trades)


async def test_two_instances_share_the_book_and_one_takes_over_when_the_other_stops(
    module_settings: GpuxSettings,
) -> None:
    settings = module_settings
    books: list[Book] = []

    async def wire(runtime: Runtime) -> Wiring:
        book, wiring = await wire_book(runtime)
        books.append(book)
        return wiring

    spec = dataclasses.replace(SPEC, wire=wire)
    gpus = gpus_one_per_partition()
    cheap = {p: offer(g, "0.30", 4) for p, g in gpus.items()}
    dear = {p: offer(g, "0.35", 4) for p, g in gpus.items()}
    market = {p: order(g, 8, OrderType.MARKET) for p, g in gpus.items()}
    limit = {p: order(g, 2, OrderType.LIMIT, "0.20") for p, g in gpus.items()}

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

        await accept(settings, [*cheap.values(), *dear.values()])

        async def offers_live() -> bool:
            live = {
                s.offer_id
                for s in await read_to_end(
                    settings, OFFERS_STATUS, EventCodec(OfferStatusChanged), "matching"
                )
                if s.status.value == "live"
            }
            return {o.offer_id for o in [*cheap.values(), *dear.values()]} <= live

        await until(offers_live, "every offer to be live")
        await fund(settings, [*market.values(), *limit.values()])

        expected: Counter[tuple[str, str, int, Decimal]] = Counter()
        for p in ALL:
            expected[(market[p].order_id, cheap[p].offer_id, 4, Decimal("0.30"))] += 1
            expected[(market[p].order_id, dear[p].offer_id, 4, Decimal("0.35"))] += 1

        async def trades() -> list[TradeExecuted]:
            """Each trade once (an outbox row republished after a stop is an exact copy)."""
            seen = await read_to_end(settings, MARKET_TRADES, EventCodec(TradeExecuted), "matching")
            return list({t.trade_id: t for t in seen}.values())

        async def traded(want: Counter[Any]) -> bool:
            return trades_key(await trades()) == want

        async def rested() -> bool:
            statuses = await read_to_end(
                settings, ORDERS_STATUS, EventCodec(OrderStatusChanged), "matching"
            )
            opened = {s.order_id for s in statuses if s.status.value == "open"}
            return {o.order_id for o in limit.values()} <= opened

        await until(lambda: traded(expected), "the market bids to fill 4 + 4")
        await until(rested, "the limit bids to rest")

        # Each partition's commands are in its own log.
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

        # The second instance stops: the first takes its partitions over with their books.
        await second.aclose()
        await until(lambda: first_book.owned() == ALL, "the first instance to hold all")
        await accept(settings, [offer(g, "0.18", 2) for g in gpus.values()])

        async def filled_rest() -> bool:
            got = [t for t in await trades() if t.order_id in {o.order_id for o in limit.values()}]
            return {t.order_id for t in got} == {o.order_id for o in limit.values()}

        await until(filled_rest, "the resting bids to fill on every partition")
        final = await trades()
        by_limit = {o.order_id for o in limit.values()}
        by_order = {t.order_id: t for t in final}
        for p in ALL:
            t = by_order[limit[p].order_id]
            assert (t.gpus, t.price_per_gpu_hour) == (2, Decimal("0.20")), (p, p in moved)
        # Exactly once: 2 trades per market bid and 1 per limit bid, nothing else.
        assert len(final) == 3 * PARTITIONS
        assert trades_key([t for t in final if t.order_id not in by_limit]) == expected
