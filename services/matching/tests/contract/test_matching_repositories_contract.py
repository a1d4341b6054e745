"""One suite for matching's repositories, run on the memory fakes and on PostgreSQL.

Ids and partition numbers are fresh per test: the PostgreSQL side shares one database.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest

from gpux_contracts.events import wrap
from gpux_contracts.ids import new_id
from gpux_contracts.market import ALL_GPUS, MarketState, MarketStateChanged
from gpux_contracts.smoke import PingSent
from gpux_matching.domain import AddOffer, Command, PlaceOrder, ReclaimLease, ReleaseLease, SetFx

from .conftest import Units

pytestmark = pytest.mark.integration

T = datetime(2026, 3, 1, tzinfo=UTC)


def fresh_partition() -> int:
    return random.randrange(1_000, 1_000_000_000)


def commands(gpu: str) -> list[Command]:
    """One command of each shape the log must keep exactly: a two-tier offer, an order, a
    rate, a lease's end and a reclaim."""
    offer = new_id()
    return [
        AddOffer(
            1,
            offer,
            "seller-1",
            gpu,
            "on_demand",
            400_000,
            "EUR",
            2,
            "hour",
            None,
            None,
            None,
            150_000,
            300,
        ),
        PlaceOrder(2, new_id(), "buyer-1", gpu, 1, "EUR", "limit", 500_000, "any", None, 2),
        SetFx(3, {"USD": Decimal("920000.5")}),
        ReleaseLease(4, f"{new_id()}:b1", offer, 1),
        ReclaimLease(5, offer, f"{new_id()}:b1"),
    ]


async def test_an_offer_keeps_its_owner_and_the_latest_revision_saved(units: Units) -> None:
    offer, other = new_id(), new_id()
    async with units() as uow:
        assert await uow.offers.revision(offer) is None
        await uow.offers.save(offer, "seller-1", "h100", 1)
        await uow.offers.save(offer, "seller-2", "a100", 3)  # a revision: the owner stays
        await uow.commit()
    async with units() as uow:
        assert await uow.offers.revision(offer) == 3
        assert await uow.offers.owners([offer, other]) == {offer: ("seller-1", "h100")}


async def test_an_order_is_known_once_saved_and_its_first_owner_stays(units: Units) -> None:
    order = new_id()
    async with units() as uow:
        assert not await uow.orders.known(order)
        await uow.orders.save(order, "buyer-1", "h100")
        await uow.orders.save(order, "buyer-2", "a100")
        await uow.commit()
    async with units() as uow:
        assert await uow.orders.known(order)
        assert await uow.orders.owners([order, new_id()]) == {order: ("buyer-1", "h100")}


async def test_a_unit_reads_its_own_saves(units: Units) -> None:
    offer, order = new_id(), new_id()
    async with units() as uow:
        await uow.offers.save(offer, "seller-1", "h100", 1)
        await uow.offers.save(offer, "seller-2", "a100", 2)
        await uow.orders.save(order, "buyer-1", "h100")
        await uow.orders.save(order, "buyer-2", "a100")
        assert await uow.offers.revision(offer) == 2
        assert await uow.orders.known(order)
        assert await uow.offers.owners([offer]) == {offer: ("seller-1", "h100")}
        assert await uow.orders.owners([order]) == {order: ("buyer-1", "h100")}
        await uow.offers.save(offer, "seller-3", "l40s", 3)  # after a read, before the commit
        await uow.commit()
    async with units() as uow:
        assert await uow.offers.revision(offer) == 3
        assert await uow.offers.owners([offer]) == {offer: ("seller-1", "h100")}


async def test_what_a_unit_did_not_commit_is_gone(units: Units) -> None:
    offer, order, partition = new_id(), new_id(), fresh_partition()
    async with units() as uow:
        await uow.commands.lock_head(partition)
        await uow.offers.save(offer, "seller-1", "h100", 1)
        await uow.orders.save(order, "buyer-1", "h100")
        await uow.commands.append(partition, commands("h100"))
    async with units() as uow:
        assert await uow.offers.revision(offer) is None
        assert not await uow.orders.known(order)
        assert await uow.commands.head(partition) == 0
        assert await uow.commands.commands_after(partition, 0) == []


async def test_the_latest_market_state_of_a_scope_wins(units: Units) -> None:
    gpu = f"gpu-{new_id().lower()}"

    def changed(scope: str, state: MarketState, at: datetime) -> MarketStateChanged:
        return MarketStateChanged(scope=scope, state=state, changed_at=at, changed_by="admin")

    async with units() as uow:
        assert not await uow.market.halted(gpu)
        await uow.market.record(changed(gpu, MarketState.HALTED, T))
        await uow.market.record(changed(gpu, MarketState.OPEN, T - timedelta(seconds=1)))
        await uow.commit()
    async with units() as uow:
        assert await uow.market.halted(gpu)
        assert not await uow.market.halted(f"{gpu}-other")
        await uow.market.record(changed(gpu, MarketState.OPEN, T + timedelta(seconds=1)))
        await uow.commit()
    async with units() as uow:
        assert not await uow.market.halted(gpu)


async def test_halting_every_gpu_halts_each_one(units: Units) -> None:
    at = datetime.now(UTC)

    def changed(state: MarketState, delta_s: int) -> MarketStateChanged:
        when = at + timedelta(seconds=delta_s)
        return MarketStateChanged(scope=ALL_GPUS, state=state, changed_at=when, changed_by="a")

    async with units() as uow:
        await uow.market.record(changed(MarketState.HALTED, 0))
        await uow.commit()
    async with units() as uow:
        assert await uow.market.halted(f"gpu-{new_id().lower()}")
        await uow.market.record(changed(MarketState.OPEN, 1))
        await uow.commit()
    async with units() as uow:
        assert not await uow.market.halted(f"gpu-{new_id().lower()}")


async def test_commands_are_logged_in_order_and_move_the_head(units: Units) -> None:
    partition, neighbour = fresh_partition(), fresh_partition()
    logged = commands("h100")
    async with units() as uow:
        assert await uow.commands.lock_head(partition) == 0
        assert await uow.commands.append(partition, []) == []
        seqs = await uow.commands.append(partition, logged)
        await uow.commands.lock_head(neighbour)
        await uow.commands.append(neighbour, commands("a100"))
        await uow.commit()
    assert seqs == sorted(seqs)
    assert len(set(seqs)) == len(logged)
    async with units() as uow:
        assert await uow.commands.lock_head(partition) == seqs[-1]
        assert await uow.commands.head(partition) == seqs[-1]
        pairs = list(zip(seqs, logged, strict=True))
        assert await uow.commands.commands_after(partition, 0) == pairs
        assert await uow.commands.commands_after(partition, seqs[0]) == pairs[1:]
        more = await uow.commands.append(partition, commands("h100")[:1])
        await uow.commit()
    assert more[0] > seqs[-1]  # a later unit draws later numbers


async def test_the_newest_snapshot_is_the_one_read_back(units: Units) -> None:
    partition = fresh_partition()
    async with units() as uow:
        assert await uow.commands.latest_snapshot(partition) is None
    async with units() as uow:
        await uow.commands.save_snapshot(partition, 5, {"format": 1, "seq": 5, "n": "five"})
        await uow.commands.save_snapshot(partition, 3, '{"format": 1, "seq": 3}')
        await uow.commands.save_snapshot(partition, 7, '{"format": 1, "seq": 7}', keep=2)
        await uow.commit()
    async with units() as uow:
        assert await uow.commands.latest_snapshot(partition) == (7, {"format": 1, "seq": 7})
        await uow.commands.save_snapshot(partition, 9, {"format": 1, "seq": 9}, keep=1)
        await uow.commit()
    async with units() as uow:
        assert await uow.commands.latest_snapshot(partition) == (9, {"format": 1, "seq": 9})


async def test_an_event_is_claimed_once(units: Units) -> None:
    event = wrap(PingSent(ping_id=new_id()), producer="t", occurred_at=T)
    async with units() as uow:
        assert await uow.claim("t", [event]) == [event]
        await uow.commit()
    async with units() as uow:
        assert await uow.claim("t", [event]) == []
