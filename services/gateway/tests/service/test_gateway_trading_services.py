"""Offers, orders, top-ups, credits, lease stops and market sessions, on the memory unit of
work: what each request stores and which commands it queues."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest
from fastapi.exceptions import RequestValidationError

from gpux_contracts.accounts import Role
from gpux_contracts.market import MarketState
from gpux_contracts.money import Currency
from gpux_contracts.offers import BillingGranularity, Tier
from gpux_contracts.orders import OrderPlaced
from gpux_gateway.adapters.memory.unit_of_work import EPOCH, MemoryGatewayUnitOfWork
from gpux_gateway.admin import service as admin
from gpux_gateway.admin.schemas import CreditIn
from gpux_gateway.domain.idempotency import Once
from gpux_gateway.market import service as market
from gpux_gateway.market.schemas import MarketStateIn
from gpux_gateway.offers import service as offers
from gpux_gateway.offers.schemas import OfferBatchIn, OfferChange, OfferIn
from gpux_gateway.orders import service as orders
from gpux_gateway.orders.schemas import OrderIn
from gpux_gateway.wallets import service as wallets
from gpux_gateway.wallets.schemas import TopupIn
from gpux_platform.problems import ProblemError

from .units import with_accounts

pytestmark = pytest.mark.unit

SELLER, BUYER = "seller-1", "buyer-1"


def once(scope: str, key: str | None = None) -> Once:
    return Once(scope=scope, key=key, fingerprint="f", ttl=timedelta(hours=48))


async def offered(uow: MemoryGatewayUnitOfWork, **changes: Any) -> str:
    """The id of SELLER's new offer (``offer(**changes)``), submitted in the open unit."""
    made = await offers.submit(uow, seller_id=SELLER, offer=offer(**changes), once=once(SELLER))
    return str(made.body["id"])


def offer(**changes: Any) -> OfferIn:
    body: dict[str, Any] = {
        "gpu": "rtx-4090",
        "gpus": 4,
        "price_per_gpu_hour": "0.33",
        "currency": Currency.USD,
        "tier": Tier.ON_DEMAND,
        "billing": BillingGranularity.SECOND,
    }
    return OfferIn.model_validate({**body, **changes})


def market_order(**changes: Any) -> OrderIn:
    body = {"gpu": "rtx-4090", "gpus": 2, "type": "market", "currency": "EUR"}
    return OrderIn.model_validate({**body, **changes})


@pytest.fixture
def uow() -> MemoryGatewayUnitOfWork:
    return with_accounts({SELLER: Role.SELLER, BUYER: Role.BUYER})


def commands(uow: MemoryGatewayUnitOfWork) -> list[tuple[str, str]]:
    return [(m.topic.name, m.envelope.event_type) for m in uow.published]


def orders_placed(uow: MemoryGatewayUnitOfWork) -> list[OrderPlaced]:
    """Every order.placed command the gateway queued, oldest first."""
    return [
        m.envelope.payload for m in uow.published if isinstance(m.envelope.payload, OrderPlaced)
    ]


async def test_an_offer_is_stored_pending_and_sent_once_per_key(
    uow: MemoryGatewayUnitOfWork,
) -> None:
    for _ in range(2):
        async with uow:
            outcome = await offers.submit(
                uow, seller_id=SELLER, offer=offer(), once=once(SELLER, "k")
            )
            await uow.commit()
    assert (outcome.status_code, outcome.body["status"], outcome.replayed) == (202, "pending", True)
    assert commands(uow) == [("offers.commands", "offer.submitted")]
    assert uow.published[0].envelope.payload.offer_id == outcome.body["id"]


def located(error: RequestValidationError) -> list[tuple[tuple[Any, ...], str]]:
    """Where each of a 422's errors[] is, and what it says."""
    return [(tuple(e["loc"]), e["msg"]) for e in error.errors()]


async def test_offers_with_bad_windows_are_refused_and_a_bulk_is_all_or_none(
    uow: MemoryGatewayUnitOfWork,
) -> None:
    past = EPOCH - timedelta(seconds=1)
    async with uow:
        with pytest.raises(RequestValidationError) as refused:
            await offers.submit(
                uow, seller_id=SELLER, offer=offer(available_until=past), once=once(SELLER)
            )
        assert located(refused.value) == [(("body", "available_until"), "must be in the future")]
        batch = OfferBatchIn(offers=[offer(), offer(available_until=EPOCH + timedelta(days=400))])
        with pytest.raises(RequestValidationError) as bulk:
            await offers.submit_many(uow, seller_id=SELLER, batch=batch, once=once(SELLER))
        assert located(bulk.value) == [
            (("body", "offers", 1, "available_until"), "at most 366 days ahead")
        ]
    assert uow.state.offers == {}
    assert uow.published == []


async def test_only_an_open_offer_of_the_seller_changes_and_a_change_must_change_something(
    uow: MemoryGatewayUnitOfWork,
) -> None:
    async with uow:
        offer_id = await offered(uow)
        with pytest.raises(RequestValidationError) as empty:  # a 422 with errors[]
            await offers.change(uow, seller_id=SELLER, offer_id=offer_id, body=OfferChange())
        assert located(empty.value) == [(("body",), "change price, interruptible price or gpus")]
        with pytest.raises(ProblemError) as foreign:
            await offers.withdraw(uow, seller_id="another-seller", offer_id=offer_id)
        assert foreign.value.status == 404
        repriced = OfferChange.model_validate({"price_per_gpu_hour": "0.30"})
        shown = await offers.change(uow, seller_id=SELLER, offer_id=offer_id, body=repriced)
        assert shown.price_per_gpu_hour == Decimal("0.33")  # as it stands until pricing says
        await offers.withdraw(uow, seller_id=SELLER, offer_id=offer_id)
        await uow.commit()
    assert [t for _, t in commands(uow)] == [
        "offer.submitted",
        "offer.change_requested",
        "offer.withdrawal_requested",
    ]
    uow.state.offers[offer_id] = replace(uow.state.offers[offer_id], status="withdrawn")
    async with uow:
        with pytest.raises(ProblemError) as closed:
            await offers.withdraw(uow, seller_id=SELLER, offer_id=offer_id)
    assert (closed.value.status, closed.value.slug) == (409, "offer-closed")


async def test_an_order_is_placed_once_and_a_final_one_cannot_be_cancelled(
    uow: MemoryGatewayUnitOfWork,
) -> None:
    body = market_order()
    async with uow:
        placed = await orders.place(uow, buyer_id=BUYER, order=body, once=once(BUYER, "o"))
        order_id = placed.body["id"]
        shown = await orders.cancel(uow, buyer_id=BUYER, order_id=order_id)
        await uow.commit()
    assert (placed.body["status"], shown.status) == ("pending_funds", "pending_funds")
    assert [t for _, t in commands(uow)] == ["order.placed", "order.cancel_requested"]
    uow.state.orders[order_id] = replace(uow.state.orders[order_id], status="filled")
    async with uow:
        with pytest.raises(ProblemError) as closed:
            await orders.cancel(uow, buyer_id=BUYER, order_id=order_id)
        detail = await orders.get(uow, BUYER, order_id)
        with pytest.raises(ProblemError) as foreign:
            await orders.get(uow, SELLER, order_id)
    assert (closed.value.status, detail.fills, foreign.value.status) == (409, [], 404)


async def test_an_order_for_a_gpu_the_catalog_lacks_is_rejected_at_once_and_never_sent(
    uow: MemoryGatewayUnitOfWork,
) -> None:
    body = market_order(gpu="no-such-gpu")
    async with uow:
        placed = await orders.place(
            uow, buyer_id=BUYER, order=body, once=once(BUYER, "u"), unknown_gpu=True
        )
        await uow.commit()
    assert placed.status_code == 202
    assert (placed.body["status"], placed.body["reason"], placed.body["remaining_gpus"]) == (
        "rejected",
        "unknown_gpu",
        0,
    )
    stored = uow.state.orders[placed.body["id"]]
    assert (stored.status, stored.reason) == ("rejected", "unknown_gpu")
    assert commands(uow) == []  # billing never holds funds for it


async def test_an_order_with_a_past_expiry_is_a_422_naming_the_field(
    uow: MemoryGatewayUnitOfWork,
) -> None:
    body = market_order(
        type="limit",
        max_price_per_gpu_hour="0.50",
        time_in_force="gtd",
        expires_at=(EPOCH - timedelta(seconds=1)).isoformat(),
    )
    async with uow:
        with pytest.raises(RequestValidationError) as refused:
            await orders.place(uow, buyer_id=BUYER, order=body, once=once(BUYER, "x"))
    assert located(refused.value) == [(("body", "expires_at"), "must be in the future")]


async def test_top_ups_credits_and_confirmations_are_commands_for_billing(
    uow: MemoryGatewayUnitOfWork,
) -> None:
    async with uow:
        topup = TopupIn.model_validate({"amount": "25.00", "currency": "EUR"})
        accepted = await wallets.top_up(uow, buyer_id=BUYER, body=topup, once=once(BUYER))
        await uow.commit()
    confirmations = []
    for _ in range(2):  # two requests
        async with uow:
            confirmations.append(wallets.confirm(uow, accepted.body["topup_id"]))
            await uow.commit()
    async with uow:
        credit = CreditIn.model_validate({"amount": "5", "currency": "EUR", "reference": "r"})
        await admin.credit(uow, account_id=BUYER, body=credit, once=once("admin", "c"))
        with pytest.raises(ProblemError) as unknown:
            await admin.credit(uow, account_id="nobody", body=credit, once=once("admin"))
        await uow.commit()
    assert unknown.value.status == 404
    assert confirmations[0] == confirmations[1]
    assert [t for _, t in commands(uow)] == [
        "topup.requested",
        "topup.confirm_requested",  # confirming twice is one command (the same id)
        "credit.requested",
    ]


async def test_the_whole_market_is_scope_star_on_the_topic(uow: MemoryGatewayUnitOfWork) -> None:
    async with uow:
        accepted = market.set_state(
            uow, MarketStateIn(scope="all", state=MarketState.HALTED, reason="maintenance")
        )
        await uow.commit()
    (message,) = uow.published
    assert (message.topic.name, message.key) == ("market.sessions", "*")
    assert accepted.scope == "all"
    assert message.envelope.event_id == accepted.event_id
