"""Market sessions in the matching service: while halted, funded orders are rejected.

Market states are published as the gateway would (``market.sessions``), offers as pricing
would and funded orders as billing would; order statuses are read back from
``orders.status``. Whether matching has applied a state is read from its table
(``matching.market_state``), since sessions and orders travel on different topics.
"""

from __future__ import annotations

import asyncio

import asyncpg

from gpux_contracts.market import ALL_GPUS, MarketState, MarketStateChanged
from gpux_contracts.offers import OfferWithdrawn
from gpux_contracts.orders import OrderType
from gpux_contracts.topics import MARKET_SESSIONS, OFFERS_STATUS, PRICING_OFFERS
from gpux_devinfra.testing.kafka import publish_payloads
from gpux_devinfra.testing.services import running
from gpux_matching.bootstrap import SPEC
from gpux_platform.clock import SystemClock
from gpux_platform.settings import GpuxSettings

from . import matching_feed as feed


async def set_state(settings: GpuxSettings, scope: str, state: MarketState) -> None:
    """Publish a market state and wait until matching has stored it."""
    changed = MarketStateChanged(
        scope=scope,
        state=state,
        reason="test",
        changed_at=SystemClock().now(),
        changed_by="admin",
    )
    await publish_payloads(settings, MARKET_SESSIONS, "gateway", [(scope, changed)])
    conn = await asyncpg.connect(settings.database_url.get_secret_value())
    try:
        async with asyncio.timeout(20):
            while True:
                stored = await conn.fetchval(
                    "SELECT state FROM matching.market_state WHERE scope = $1", scope
                )
                if stored == state.value:
                    return
                await asyncio.sleep(0.1)
    finally:
        await conn.close()


async def test_a_halted_gpu_rejects_new_orders_keeps_resting_ones_and_takes_offers(
    module_settings: GpuxSettings,
) -> None:
    settings = module_settings
    gpu = "gpu-halted"
    async with running(SPEC, settings, **feed.RUN):
        ask = feed.offer(gpu, "0.40", 2)
        resting = feed.order(gpu, 2, OrderType.LIMIT, price="0.30")
        await feed.accept(settings, ask)
        await feed.live(settings, ask)
        await feed.fund(settings, resting)
        await feed.orders_until(settings, (resting.order_id, "open", 0, 2, None))

        await set_state(settings, gpu, MarketState.HALTED)
        refused = feed.order(gpu, 2, OrderType.MARKET)
        await feed.fund(settings, refused)
        states = await feed.orders_until(
            settings, (refused.order_id, "rejected", 0, 2, "market_halted")
        )
        assert (refused.order_id, "rejected", 0, 2, "market_halted") in states
        assert await feed.trades_of(settings, refused.order_id) == []

        # Offers can still be pushed and withdrawn while halted; the resting bid stays.
        another = feed.offer(gpu, "0.35", 3)
        await feed.accept(settings, another)
        await feed.live(settings, another)
        withdrawn = OfferWithdrawn(offer_id=ask.offer_id, seller_id=ask.seller_id, gpu=gpu)
        await publish_payloads(settings, PRICING_OFFERS, "pricing", [(gpu, withdrawn)])
        seen = await feed.reported(
            settings,
            OFFERS_STATUS,
            lambda s: (ask.offer_id, "withdrawn") in {(x.offer_id, x.status.value) for x in s},
        )
        assert (ask.offer_id, "withdrawn") in {(x.offer_id, x.status.value) for x in seen}

        assert (resting.order_id, "open", 0, 2, None) in await feed.orders_until(
            settings, (resting.order_id, "open", 0, 2, None)
        )
        assert await feed.trades_of(settings, resting.order_id) == []

        # Another GPU model trades on; the halted one trades again once reopened.
        other = feed.order("gpu-halted-other", 1, OrderType.LIMIT, price="0.10")
        await feed.fund(settings, other)
        await feed.orders_until(settings, (other.order_id, "open", 0, 1, None))
        await set_state(settings, gpu, MarketState.OPEN)
        again = feed.order(gpu, 1, OrderType.LIMIT, price="0.10")
        await feed.fund(settings, again)
        states = await feed.orders_until(settings, (again.order_id, "open", 0, 1, None))
        assert (again.order_id, "open", 0, 1, None) in states


async def test_halting_the_whole_market_rejects_every_gpu_until_it_reopens(
    module_settings: GpuxSettings,
) -> None:
    settings = module_settings
    async with running(SPEC, settings, **feed.RUN):
        await set_state(settings, ALL_GPUS, MarketState.HALTED)
        refused = [
            feed.order(gpu, 1, OrderType.LIMIT, price="0.10") for gpu in ("gpu-a1", "gpu-a2")
        ]
        for placed in refused:
            await feed.fund(settings, placed)
        for placed in refused:
            expected = (placed.order_id, "rejected", 0, 1, "market_halted")
            assert expected in await feed.orders_until(settings, expected)

        # A redelivered funding is not rejected (nor placed) a second time.
        await feed.fund(settings, refused[0])
        await set_state(settings, ALL_GPUS, MarketState.OPEN)
        placed = feed.order("gpu-a1", 1, OrderType.LIMIT, price="0.10")
        await feed.fund(settings, placed)
        states = await feed.orders_until(settings, (placed.order_id, "open", 0, 1, None))
        assert (placed.order_id, "open", 0, 1, None) in states
        assert [s[0] for s in states].count(refused[0].order_id) == 1
