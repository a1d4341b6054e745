"""A restart's rebuild of the read models, on the memory unit of work: the same quotes and
histories as before, from the store alone, and nothing sent on the price stream."""

from __future__ import annotations

from typing import Any

import pytest

from gpux_contracts.events import Envelope, Payload, wrap
from gpux_contracts.offers import OfferStatus, OfferStatusChanged, OfferSubmitted
from gpux_contracts.topics import MARKET_TRADES, OFFERS_COMMANDS, OFFERS_STATUS, Topic
from gpux_devinfra.testing.payloads import offer_status, offer_submitted, trade_executed
from gpux_platform.batches import BatchHandler
from gpux_platform.clock import ManualClock
from gpux_pricing.adapters.memory.read_models import MemoryReadModels
from gpux_pricing.adapters.memory.unit_of_work import MemoryPricingUnitOfWork
from gpux_pricing.domain.quotes import same_state
from gpux_pricing.service import HANDLERS_BY_TOPIC

from .conftest import START, restart

pytestmark = pytest.mark.unit


def event(payload: Payload) -> Envelope[Any]:
    return wrap(payload, producer="matching", occurred_at=START)


async def apply(unit: MemoryPricingUnitOfWork, topic: Topic, *payloads: Payload) -> None:
    events = [event(p) for p in payloads]
    await BatchHandler(topic, HANDLERS_BY_TOPIC[topic], lambda: unit).apply(events)


def offer(offer_id: str, price: str, region: str | None) -> OfferSubmitted:
    return offer_submitted(offer_id, price=price, gpus=2, region=region)


def live(offer_id: str, left: int) -> OfferStatusChanged:
    return offer_status(offer_id, OfferStatus.LIVE if left else OfferStatus.EXHAUSTED, left)


async def test_a_restart_shows_the_same_quotes_and_histories_and_streams_nothing(
    unit: MemoryPricingUnitOfWork, clock: ManualClock
) -> None:
    await apply(unit, OFFERS_COMMANDS, offer("o1", "0.40", None), offer("o2", "0.30", "eu-west"))
    await apply(unit, OFFERS_STATUS, live("o1", 2), live("o2", 1))
    trade = trade_executed(trade_id="t1", offer_id="o2", price="0.30", executed_at=START)
    await apply(unit, MARKET_TRADES, trade)
    before = unit.read_models
    assert isinstance(before, MemoryReadModels)

    # A new process: its own books in memory, empty read models, the same store.
    restarted, fresh = await restart(unit, clock)
    assert fresh.quotes.keys() == before.quotes.keys()
    assert all(same_state(fresh.quotes[k], q) for k, q in before.quotes.items())
    assert fresh.histories == before.histories
    assert fresh.stream == []
    assert restarted.published == []

    # What the rebuild showed counts as sent: the same state again sends nothing.
    await apply(restarted, OFFERS_STATUS, live("o1", 2))
    assert restarted.published == []
    await apply(restarted, OFFERS_STATUS, live("o2", 0))
    assert {m.key for m in restarted.published} == {
        "rtx-4090|on_demand|*",
        "rtx-4090|on_demand|eu-west",
    }
