"""An offer's provisioning timeout in the offers view, on memory and on PostgreSQL: stored as
submitted and read back by one offer and by the seller's page; on PostgreSQL an offer stored
without it (a row from before the delivery issue) reads as 0, ready at its lease's start."""

from __future__ import annotations

import asyncpg
import pytest

from gpux_contracts.accounts import Role
from gpux_contracts.ids import new_id
from gpux_gateway.adapters.postgres.unit_of_work import PostgresGatewayUnitOfWork
from gpux_platform.clock import ManualClock

from .conftest import Units
from .test_gateway_repositories_contract import account, submitted

pytestmark = pytest.mark.integration


async def test_an_offer_keeps_its_provisioning_timeout(units: Units) -> None:
    seller = await account(units, Role.SELLER)
    timeouts = {new_id(): seconds for seconds in (0, 60, 600, 86_400)}
    async with units() as uow:
        made = [
            await uow.offers.add(
                submitted(seller.id, offer_id).model_copy(
                    update={"provisioning_timeout_seconds": seconds}
                ),
                uow.now,
            )
            for offer_id, seconds in timeouts.items()
        ]
        await uow.commit()
    assert {m.id: m.provisioning_timeout_seconds for m in made} == timeouts
    async with units() as uow:
        one = [await uow.offers.get(seller.id, offer_id) for offer_id in timeouts]
        page = await uow.offers.page(seller.id, None, 10)
    assert {o.id: o.provisioning_timeout_seconds for o in one if o is not None} == timeouts
    assert {o.id: o.provisioning_timeout_seconds for o in page} == timeouts


async def test_an_offer_stored_without_a_timeout_is_ready_at_the_start(
    pool: asyncpg.Pool, clock: ManualClock
) -> None:
    def units() -> PostgresGatewayUnitOfWork:
        return PostgresGatewayUnitOfWork(pool, clock)

    seller = await account(units, Role.SELLER)
    offer_id = new_id()
    async with pool.acquire() as conn:
        await conn.execute(
            "INSERT INTO gateway.offers (id, seller_id, gpu, gpus, remaining_gpus, price_micros,"
            " currency, tier, billing, status, created_at, updated_at)"
            " VALUES ($1, $2, 'rtx-4090', 4, 4, 330000, 'USD', 'on_demand', 'hour', 'live',"
            " $3, $3)",
            offer_id,
            seller.id,
            clock.now(),
        )
        with pytest.raises(asyncpg.CheckViolationError):
            await conn.execute(
                "UPDATE gateway.offers SET provisioning_timeout_seconds = 59 WHERE id = $1",
                offer_id,
            )
    async with units() as uow:
        row = await uow.offers.get(seller.id, offer_id)
    assert row is not None
    assert row.provisioning_timeout_seconds == 0
