"""The sellers' view of offers on memory and on PostgreSQL: reports read out of order never
take the view back, and a change pricing accepted shows from its revision on."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from decimal import Decimal

import pytest

from gpux_contracts.accounts import AccountStatus, Role
from gpux_contracts.ids import new_id
from gpux_contracts.offers import OfferAccepted, OfferStatus, OfferStatusChanged
from gpux_devinfra.testing.payloads import offer_status
from gpux_gateway.accounts.repository import AccountRow
from gpux_gateway.adapters.memory.unit_of_work import EPOCH
from gpux_gateway.offers.repository import OfferRow
from gpux_platform.clock import ManualClock

from .conftest import Units
from .test_gateway_repositories_contract import submitted

pytestmark = pytest.mark.integration


async def an_offer(units: Units) -> OfferRow:
    """A seller with one pending offer of 4 GPUs at 0.33 USD."""
    seller = AccountRow(new_id(), "acme", (Role.SELLER,), AccountStatus.ACTIVE, EPOCH)
    async with units() as uow:
        await uow.accounts.add(seller)
        row = await uow.offers.add(submitted(seller.id, new_id()), uow.now)
        await uow.commit()
    return row


def status(
    row: OfferRow, state: OfferStatus, remaining: int, reason: str | None = None
) -> OfferStatusChanged:
    return offer_status(row.id, state, remaining, seller_id=row.seller_id, reason=reason)


def accepted(row: OfferRow, revision: int, price: str, gpus: int) -> OfferAccepted:
    body = submitted(row.seller_id, row.id).model_copy(
        update={"price_per_gpu_hour": Decimal(price), "gpus": gpus}
    )
    return OfferAccepted(offer=body, revision=revision)


async def shown(units: Units, row: OfferRow) -> OfferRow | None:
    async with units() as uow:
        return await uow.offers.get(row.seller_id, row.id)


async def reported(units: Units, row: OfferRow, *reports: OfferStatusChanged) -> OfferRow:
    """``row`` as the view shows it once one unit applied the book's ``reports`` in order."""
    async with units() as uow:
        for report in reports:
            await uow.offers.apply_status(report, uow.now)
        await uow.commit()
    view = await shown(units, row)
    assert view is not None
    return view


async def test_reports_read_out_of_order_never_take_the_view_back(
    units: Units, clock: ManualClock
) -> None:
    row = await an_offer(units)
    clock.advance(timedelta(seconds=1))
    # The book's report overtook pricing's.
    overtaken = await reported(
        units,
        row,
        status(row, OfferStatus.LIVE, 4),
        status(row, OfferStatus.ACCEPTED, 4),
        status(row, OfferStatus.LIVE, 2),
    )
    assert overtaken == replace(row, status="live", remaining_gpus=2, updated_at=clock.now())
    # A refused change: live stays live, and its reason shows.
    view = await reported(units, row, status(row, OfferStatus.ACCEPTED, 4, "too_cheap"))
    assert (view.status, view.remaining_gpus, view.reason) == ("live", 2, "too_cheap")
    # Exhausted, then a late accepted: the book's word stays.
    view = await reported(
        units, row, status(row, OfferStatus.EXHAUSTED, 0), status(row, OfferStatus.ACCEPTED, 4)
    )
    assert (view.status, view.remaining_gpus) == ("exhausted", 0)
    # A lease gave GPUs back: live again.
    view = await reported(units, row, status(row, OfferStatus.LIVE, 3))
    assert (view.status, view.remaining_gpus) == ("live", 3)
    # Withdrawn, then a late accepted, pending and live: closed stays.
    view = await reported(
        units,
        row,
        status(row, OfferStatus.WITHDRAWN, 0),
        status(row, OfferStatus.ACCEPTED, 4),
        status(row, OfferStatus.PENDING, 4),
        status(row, OfferStatus.LIVE, 3),
    )
    assert (view.status, view.remaining_gpus) == ("withdrawn", 0)


async def test_a_change_shows_from_its_revision_on_and_an_older_one_never_again(
    units: Units, clock: ManualClock
) -> None:
    row = await an_offer(units)
    assert row.revision == 1
    clock.advance(timedelta(seconds=1))
    async with units() as uow:
        await uow.offers.apply_accepted(accepted(row, 3, "0.5", 6), uow.now)
        await uow.offers.apply_accepted(accepted(row, 2, "0.4", 5), uow.now)  # late: older
        await uow.commit()
    assert await shown(units, row) == replace(
        row, price_micros=500_000, gpus=6, revision=3, updated_at=clock.now()
    )
    async with units() as uow:
        await uow.offers.apply_status(status(row, OfferStatus.WITHDRAWN, 0), uow.now)
        await uow.offers.apply_accepted(accepted(row, 4, "0.6", 6), uow.now)
        await uow.commit()
    view = await shown(units, row)
    assert view is not None
    assert (view.status, view.price_micros, view.revision) == ("withdrawn", 500_000, 3)
