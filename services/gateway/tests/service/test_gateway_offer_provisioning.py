"""An offer's provisioning timeout through the offers service, on the memory unit of work:
the API's default, 0 (ready at the lease's start), the bounds, and the 422 of anything else,
in one offer and in a bulk; the timeout is stored, shown and sent on ``offer.submitted``."""

from __future__ import annotations

import pytest
from fastapi.exceptions import RequestValidationError
from pydantic import ValidationError

from gpux_contracts.accounts import Role
from gpux_contracts.offers import (
    DEFAULT_PROVISIONING_TIMEOUT_SECONDS,
    MAX_PROVISIONING_TIMEOUT_SECONDS,
    MIN_PROVISIONING_TIMEOUT_SECONDS,
    OfferSubmitted,
)
from gpux_gateway.adapters.memory.unit_of_work import MemoryGatewayUnitOfWork
from gpux_gateway.offers import service as offers
from gpux_gateway.offers.schemas import OfferBatchIn

from .test_gateway_trading_services import SELLER, located, offer, once
from .units import with_accounts

pytestmark = pytest.mark.unit

FIELD = "provisioning_timeout_seconds"
BOUNDS_MESSAGE = "must be 0 (ready at the start) or 60 to 86400 seconds"


@pytest.fixture
def uow() -> MemoryGatewayUnitOfWork:
    return with_accounts({SELLER: Role.SELLER})


async def test_an_offer_states_its_timeout_or_gets_the_default_and_shows_and_sends_it(
    uow: MemoryGatewayUnitOfWork,
) -> None:
    stated = (
        None,
        0,
        MIN_PROVISIONING_TIMEOUT_SECONDS,
        MAX_PROVISIONING_TIMEOUT_SECONDS,
    )
    async with uow:
        made = [
            await offers.submit(
                uow,
                seller_id=SELLER,
                offer=offer() if seconds is None else offer(**{FIELD: seconds}),
                once=once(SELLER),
            )
            for seconds in stated
        ]
        await uow.commit()
    expected = [DEFAULT_PROVISIONING_TIMEOUT_SECONDS, 0, 60, 86_400]
    assert [m.body[FIELD] for m in made] == expected
    sent = [m.envelope.payload for m in uow.published]
    assert all(isinstance(s, OfferSubmitted) for s in sent)
    assert [getattr(s, FIELD) for s in sent] == expected
    async with uow:
        shown = [await offers.get(uow, SELLER, str(m.body["id"])) for m in made]
        page = await offers.page(uow, SELLER, limit=10, cursor=None)
    assert [s.provisioning_timeout_seconds for s in shown] == expected
    assert sorted(o.provisioning_timeout_seconds for o in page.items) == sorted(expected)


@pytest.mark.parametrize("seconds", [1, MIN_PROVISIONING_TIMEOUT_SECONDS - 1])
async def test_a_timeout_between_0_and_the_minimum_is_a_422_naming_the_field(
    uow: MemoryGatewayUnitOfWork, seconds: int
) -> None:
    async with uow:
        with pytest.raises(RequestValidationError) as refused:
            await offers.submit(
                uow, seller_id=SELLER, offer=offer(**{FIELD: seconds}), once=once(SELLER)
            )
        batch = OfferBatchIn(offers=[offer(**{FIELD: 0}), offer(**{FIELD: seconds})])
        with pytest.raises(RequestValidationError) as bulk:
            await offers.submit_many(uow, seller_id=SELLER, batch=batch, once=once(SELLER))
    assert located(refused.value) == [(("body", FIELD), BOUNDS_MESSAGE)]
    assert located(bulk.value) == [(("body", "offers", 1, FIELD), BOUNDS_MESSAGE)]
    assert uow.published == []  # all or none: not even the good offer of the bulk


@pytest.mark.parametrize("seconds", [-1, MAX_PROVISIONING_TIMEOUT_SECONDS + 1])
def test_a_timeout_outside_the_contract_is_refused_by_the_schema(seconds: int) -> None:
    with pytest.raises(ValidationError) as refused:
        offer(**{FIELD: seconds})
    assert [e["loc"] for e in refused.value.errors()] == [(FIELD,)]


async def test_a_bulk_sends_each_offer_with_its_own_timeout(
    uow: MemoryGatewayUnitOfWork,
) -> None:
    batch = OfferBatchIn(offers=[offer(**{FIELD: 0}), offer(**{FIELD: 900}), offer()])
    async with uow:
        made = await offers.submit_many(uow, seller_id=SELLER, batch=batch, once=once(SELLER))
        await uow.commit()
    expected = [0, 900, DEFAULT_PROVISIONING_TIMEOUT_SECONDS]
    assert [item[FIELD] for item in made.body["items"]] == expected
    assert [getattr(m.envelope.payload, FIELD) for m in uow.published] == expected
