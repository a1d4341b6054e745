"""An offer's provisioning timeout through the book's service, on the memory unit of work:
``offer.accepted`` logs it with the offer, and every ``trade.executed`` of the offer carries
it, whichever side arrives, also after the partition restarts from its snapshot and log."""

from __future__ import annotations

import pytest

from gpux_contracts.orders import TradeExecuted
from gpux_contracts.topics import MARKET_TRADES
from gpux_matching.domain import AddOffer

from .matching_desk import Desk

pytestmark = pytest.mark.unit


def trades(desk: Desk) -> list[tuple[str, int]]:
    found: list[TradeExecuted] = desk.published(MARKET_TRADES)
    return [(t.offer_id, t.provisioning_timeout_seconds) for t in found]


async def test_every_trade_carries_its_offers_provisioning_timeout(desk: Desk) -> None:
    slow = desk.offer("0.40", 2, provisioning_timeout_seconds=900)
    ready = desk.offer("0.45", 2)
    await desk.offers(desk.accepted(slow), desk.accepted(ready))
    added = desk.logged()
    assert [c.provisioning_s for c in added if isinstance(c, AddOffer)] == [900, 0]

    await desk.orders(desk.funded(desk.order(3)))  # the bid takes both offers
    assert trades(desk) == [(slow.offer_id, 900), (ready.offer_id, 0)]

    resting = desk.order(2, "0.50", buyer_id="buyer-2")
    await desk.orders(desk.funded(resting))
    later = desk.offer("0.40", 2, provisioning_timeout_seconds=60)
    await desk.offers(desk.accepted(later))  # the offer arrives and takes the bid
    assert trades(desk)[-1] == (later.offer_id, 60)


@pytest.mark.parametrize("snapshot_every", [1, 1000], ids=["from-snapshot", "from-log"])
async def test_a_restarted_partition_keeps_the_offers_timeout(snapshot_every: int) -> None:
    desk = Desk(snapshot_every=snapshot_every)
    slow = desk.offer("0.40", 2, provisioning_timeout_seconds=900)
    await desk.offers(desk.accepted(slow))
    again = desk.new_partition(snapshot_every=snapshot_every)
    await again.recover()
    desk.partition = again
    await desk.orders(desk.funded(desk.order(2)))
    assert trades(desk) == [(slow.offer_id, 900)]
