"""Capacity through the running service: a lease's end gives its GPUs back, and an on-demand
order preempts an interruptible lease.

Leases end as billing announces it (``lease.released`` on ``capacity.commands``, keyed by GPU
id); the book's interruptions are read back from ``billing.commands`` (keyed by the lease's
buyer). Each test uses a GPU model of its own.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta
from decimal import Decimal

import pytest

from gpux_contracts.capacity import InterruptionCause, LeaseInterruptionRequested, LeaseReleased
from gpux_contracts.leases import LeaseEndReason
from gpux_contracts.offers import OfferStatusChanged, Tier
from gpux_contracts.orders import OrderTier, OrderType, TradeExecuted
from gpux_contracts.topics import BILLING_COMMANDS, CAPACITY_COMMANDS, OFFERS_STATUS
from gpux_devinfra.testing.kafka import publish_payloads, records_to_end
from gpux_devinfra.testing.services import running
from gpux_devinfra.testing.waiting import eventually
from gpux_matching.bootstrap import SPEC
from gpux_platform.clock import SystemClock
from gpux_platform.settings import GpuxSettings

from .matching_feed import RUN, fund, fund_once_live, offer, order, reported, trades_of


@pytest.fixture
async def serving(module_settings: GpuxSettings) -> AsyncIterator[GpuxSettings]:
    """The module's settings, with the matching service running for the test."""
    async with running(SPEC, module_settings, **RUN):
        yield module_settings


async def release(settings: GpuxSettings, lease: TradeExecuted, reason: LeaseEndReason) -> None:
    """Billing's ``lease.released`` of the lease the trade opened."""
    released = LeaseReleased(
        lease_id=lease.trade_id,
        offer_id=lease.offer_id,
        gpu=lease.gpu,
        gpus=lease.gpus,
        tier=Tier(lease.tier),
        reason=reason,
        ended_at=SystemClock().now(),
    )
    await publish_payloads(settings, CAPACITY_COMMANDS, "billing", [(lease.gpu, released)])


Pool = tuple[str, int | None, int | None, int]
"""(status, capacity, leased, free) of an ``offer.status_changed``."""


async def pools_until(settings: GpuxSettings, offer_id: str, wanted: Pool) -> list[Pool]:
    """The offer's reports from the book, in order, once the last of them is ``wanted``."""

    def of_offer(seen: list[OfferStatusChanged]) -> list[Pool]:
        return [
            (s.status.value, s.capacity_gpus, s.leased_gpus, s.remaining_gpus)
            for s in seen
            if s.offer_id == offer_id
        ]

    seen = await reported(settings, OFFERS_STATUS, lambda s: of_offer(s)[-1:] == [wanted])
    return of_offer(seen)


async def only_trade(settings: GpuxSettings, order_id: str) -> TradeExecuted:
    trades = await eventually(
        lambda: trades_of(settings, order_id), bool, what="the order's trade", interval_s=0.3
    )
    (trade,) = trades
    return trade


async def test_a_released_lease_brings_its_offers_gpus_back(serving: GpuxSettings) -> None:
    settings = serving
    gpu = "gpu-release"
    ask = offer(gpu, "0.40", 3)
    taker = order(gpu, 3, OrderType.MARKET)
    await fund_once_live(settings, [ask], taker)
    lease = await only_trade(settings, taker.order_id)
    assert lease.starts_at is None
    await pools_until(settings, ask.offer_id, ("exhausted", 3, 3, 0))

    await release(settings, lease, LeaseEndReason.STOPPED)
    seen = await pools_until(settings, ask.offer_id, ("live", 3, 0, 3))
    assert seen == [("live", 3, 0, 3), ("exhausted", 3, 3, 0), ("live", 3, 0, 3)]

    # Sold again: the GPUs that came back are as good as new.
    again = order(gpu, 2, OrderType.MARKET)
    await fund(settings, again)
    second = await only_trade(settings, again.order_id)
    assert (second.offer_id, second.gpus, second.price_per_gpu_hour) == (
        ask.offer_id,
        2,
        Decimal("0.40"),
    )
    await pools_until(settings, ask.offer_id, ("live", 3, 2, 1))


async def test_an_on_demand_order_preempts_an_interruptible_lease(serving: GpuxSettings) -> None:
    settings = serving
    gpu = "gpu-preempt"
    ask = offer(gpu, "0.50", 4, interruptible_price_per_gpu_hour=Decimal("0.20"))
    spot = order(gpu, 4, OrderType.MARKET, tier=OrderTier.INTERRUPTIBLE, buyer_id="buyer-spot")
    await fund_once_live(settings, [ask], spot)
    lease = await only_trade(settings, spot.order_id)
    assert (lease.tier, lease.billing, lease.price_per_gpu_hour) == (
        "interruptible",
        "second",
        Decimal("0.20"),
    )
    await pools_until(settings, ask.offer_id, ("exhausted", 4, 4, 0))

    urgent = order(gpu, 3, OrderType.LIMIT, "0.60", tier=OrderTier.ON_DEMAND)
    await fund(settings, urgent)
    taking = await only_trade(settings, urgent.order_id)
    assert (taking.tier, taking.gpus, taking.price_per_gpu_hour) == (
        "on_demand",
        3,
        Decimal("0.50"),
    )
    assert taking.starts_at == taking.executed_at + timedelta(seconds=120)  # the default notice

    records = await eventually(
        lambda: interruption_records(settings, lease.trade_id),
        bool,
        what="the book's interruption on billing.commands",
        interval_s=0.3,
    )
    ((key, interruption),) = records
    assert key == "buyer-spot"
    assert (interruption.cause, interruption.gpus, interruption.taken_by) == (
        InterruptionCause.PREEMPTED,
        4,
        [taking.trade_id],
    )
    assert (interruption.noticed_at, interruption.interrupt_at) == (
        taking.executed_at,
        taking.starts_at,
    )

    # The interrupted lease ends: three GPUs are the on-demand order's, one is free.
    await release(settings, lease, LeaseEndReason.INTERRUPTED)
    await pools_until(settings, ask.offer_id, ("live", 4, 3, 1))


async def interruption_records(
    settings: GpuxSettings, lease_id: str
) -> list[tuple[str, LeaseInterruptionRequested]]:
    """(key, payload) of the book's interruptions of ``lease_id`` on ``billing.commands``."""
    codec = BILLING_COMMANDS.codec()
    found = []
    for record in await records_to_end(settings, BILLING_COMMANDS):
        envelope = codec.decode(record.value)
        payload = envelope.payload
        if isinstance(payload, LeaseInterruptionRequested) and payload.lease_id == lease_id:
            assert envelope.producer == "matching"
            found.append((record.key.decode(), payload))
    return found
