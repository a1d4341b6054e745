"""A change pricing accepted (``pricing.offers``) shows in the seller's view from its revision
on; the first revision is the offer as submitted, and a forwarded withdrawal waits for the book."""

from __future__ import annotations

from decimal import Decimal

import pytest

from gpux_contracts.accounts import AccountStatus, Role
from gpux_contracts.events import wrap
from gpux_contracts.money import Currency
from gpux_contracts.offers import (
    BillingGranularity,
    OfferAccepted,
    OfferSubmitted,
    OfferWithdrawn,
    Tier,
)
from gpux_contracts.topics import PRICING_OFFERS
from gpux_gateway.accounts.repository import AccountRow
from gpux_gateway.adapters.memory.unit_of_work import EPOCH, MemoryGatewayUnitOfWork
from gpux_gateway.service import HANDLERS_BY_TOPIC
from gpux_platform.batches import BatchHandler

pytestmark = pytest.mark.unit

SELLER = "seller-1"
SUBMITTED = OfferSubmitted(
    offer_id="f1",
    seller_id=SELLER,
    gpu="rtx-4090",
    gpus=4,
    price_per_gpu_hour=Decimal("0.40"),
    currency=Currency.EUR,
    tier=Tier.ON_DEMAND,
    billing=BillingGranularity.HOUR,
)


def revision(number: int, price: str, gpus: int) -> OfferAccepted:
    body = SUBMITTED.model_copy(update={"price_per_gpu_hour": Decimal(price), "gpus": gpus})
    return OfferAccepted(offer=body, revision=number)


async def test_an_accepted_change_shows_from_its_revision_on() -> None:
    uow = MemoryGatewayUnitOfWork()
    async with uow:
        await uow.accounts.add(AccountRow(SELLER, "s", (Role.SELLER,), AccountStatus.ACTIVE, EPOCH))
        await uow.offers.add(SUBMITTED, uow.now)
        await uow.commit()
    batch = BatchHandler(PRICING_OFFERS, HANDLERS_BY_TOPIC[PRICING_OFFERS], lambda: uow)
    withdrawn = OfferWithdrawn(offer_id="f1", seller_id=SELLER, gpu="rtx-4090")
    events = [
        revision(1, "0.40", 4),
        revision(3, "0.55", 2),
        revision(2, "0.50", 3),  # read late: older than what is shown
        withdrawn,
    ]
    outcome = await batch.apply([wrap(p, producer="pricing", occurred_at=EPOCH) for p in events])
    assert (outcome.applied, outcome.unhandled, outcome.units) == (4, 0, 1)
    row = uow.state.offers["f1"]
    assert (row.price_micros, row.gpus, row.revision) == (550_000, 2, 3)
    assert row.status == "pending"  # a forwarded withdrawal shows once the book confirms it
