"""Sellers' reliability through Kafka: the book reads ``billing.reliability`` whole, and an
order with a minimum fills only from sellers rated at least that high, with the rates that
were on the topic at start and with those that arrive later."""

from __future__ import annotations

from decimal import Decimal

from gpux_contracts.orders import OrderType
from gpux_contracts.reliability import ReliabilityChanged, ReliabilityCounts
from gpux_contracts.topics import BILLING_RELIABILITY
from gpux_devinfra.testing.kafka import publish_payloads
from gpux_devinfra.testing.services import running
from gpux_matching.bootstrap import SPEC
from gpux_platform.broker import ensure_topics
from gpux_platform.clock import SystemClock
from gpux_platform.settings import GpuxSettings

from .matching_feed import RUN, fund, fund_once_live, offer, order, orders_until, trades_of

GPU = "gpu-reliable"


async def rate(settings: GpuxSettings, seller_id: str, ready: int, failed: int) -> None:
    """Billing's word that ``seller_id`` delivered ``ready`` leases in time, ``failed`` not."""
    counts = ReliabilityCounts(ready_in_time=ready, failed=failed)
    changed = ReliabilityChanged(
        seller_id=seller_id,
        offer_id=f"offer-of-{seller_id}",
        offer=counts,
        seller=counts,
        lease_id=f"lease-{ready}-{failed}",
        as_of=SystemClock().now(),
    )
    await publish_payloads(settings, BILLING_RELIABILITY, "billing", [(changed.offer_id, changed)])


async def test_an_order_with_a_minimum_fills_only_from_sellers_rated_that_high(
    module_settings: GpuxSettings,
) -> None:
    settings = module_settings
    await ensure_topics(settings, [BILLING_RELIABILITY])  # on the topic before matching starts
    await rate(settings, "shaky", 8, 2)  # 80 %
    await rate(settings, "solid", 19, 1)  # 95 %
    shaky = offer(GPU, "0.30", 2, seller_id="shaky")
    solid = offer(GPU, "0.40", 2, seller_id="solid")
    unrated = offer(GPU, "0.20", 2, seller_id="newcomer")
    picky = order(GPU, 3, OrderType.LIMIT, "1.00", min_reliability=Decimal("0.9"))
    async with running(SPEC, settings, **RUN):
        await fund_once_live(settings, [shaky, solid, unrated], picky)
        await orders_until(settings, (picky.order_id, "partially_filled", 2, 1, None))
        assert [t.seller_id for t in await trades_of(settings, picky.order_id)] == ["solid"]

        # The shaky seller improves while the order rests: it now qualifies and fills it.
        await rate(settings, "shaky", 28, 2)  # 93.33 %
        await orders_until(settings, (picky.order_id, "filled", 3, 0, None))
        trades = await trades_of(settings, picky.order_id)
        assert [(t.seller_id, t.gpus, t.price_per_gpu_hour) for t in trades] == [
            ("solid", 2, Decimal("0.40")),
            ("shaky", 1, Decimal("0.30")),
        ]

        # An order without a minimum takes the cheapest, the unrated seller's GPUs.
        plain = order(GPU, 1, OrderType.MARKET)
        await fund(settings, plain)
        await orders_until(settings, (plain.order_id, "filled", 1, 0, None))
        assert [t.seller_id for t in await trades_of(settings, plain.order_id)] == ["newcomer"]

    # After a restart (the book from its snapshot and log, the feed read again from the start)
    # the rates hold: 93.33 % is not enough for 95 %, and the order rests.
    choosy = order(GPU, 1, OrderType.LIMIT, "1.00", min_reliability=Decimal("0.95"))
    async with running(SPEC, settings, **RUN):
        await fund(settings, choosy)
        await orders_until(settings, (choosy.order_id, "open", 0, 1, None))
        await rate(settings, "shaky", 57, 3)  # 95 %
        await orders_until(settings, (choosy.order_id, "filled", 1, 0, None))
        assert [t.seller_id for t in await trades_of(settings, choosy.order_id)] == ["shaky"]
