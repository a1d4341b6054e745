"""The gateway's repositories on memory and on PostgreSQL: one suite, both stores.

What the views keep from consumed events is checked in one unit of work per batch, as the
batched subscribers write it: reports applied in order, late ones never undoing newer ones.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest

from gpux_contracts.accounts import AccountStatus, Role
from gpux_contracts.ids import new_id
from gpux_contracts.money import Currency
from gpux_contracts.offers import BillingGranularity, OfferStatus, OfferSubmitted
from gpux_contracts.orders import OrderPlaced, OrderStatus, OrderStatusChanged
from gpux_devinfra.testing.payloads import (
    offer_status,
    offer_submitted,
    order_placed,
    order_status,
    trade_executed,
)
from gpux_gateway.accounts.repository import AccountRow
from gpux_gateway.adapters.memory.unit_of_work import EPOCH
from gpux_gateway.domain.access import Scope
from gpux_gateway.domain.idempotency import StoredResponse
from gpux_gateway.keys.repository import KeyRow
from gpux_platform.clock import ManualClock

from .conftest import Units

pytestmark = pytest.mark.integration


async def account(units: Units, role: Role = Role.BUYER) -> AccountRow:
    row = AccountRow(new_id(), "acme", (role,), AccountStatus.ACTIVE, EPOCH)
    async with units() as uow:
        await uow.accounts.add(row)
        await uow.commit()
    return row


async def test_accounts_and_their_keys(units: Units, clock: ManualClock) -> None:
    owner = await account(units)
    key = KeyRow(
        new_id()[:16].lower(), owner.id, "k", b"digest", frozenset({Scope.READ}), EPOCH, None
    )
    async with units() as uow:
        await uow.keys.add(key)
        await uow.commit()
    clock.advance(timedelta(minutes=1))
    async with units() as uow:
        assert await uow.keys.with_account(key.id) == (key, owner)
        assert await uow.keys.revoke(owner.id, key.id, uow.now)
        assert not await uow.keys.revoke("someone-else", key.id, uow.now)
        suspended = await uow.accounts.set_status(owner.id, AccountStatus.SUSPENDED, uow.now)
        assert await uow.accounts.set_status("nobody", AccountStatus.ACTIVE, uow.now) is None
        await uow.commit()
    assert suspended == replace(owner, status=AccountStatus.SUSPENDED)
    clock.advance(timedelta(minutes=1))
    async with units() as uow:
        await uow.keys.revoke(owner.id, key.id, uow.now)  # a second revocation keeps the first
        (held,) = await uow.keys.of_account(owner.id)
        await uow.commit()
    assert held.revoked_at == EPOCH + timedelta(minutes=1)


async def test_a_rolled_back_unit_leaves_nothing(units: Units) -> None:
    row = AccountRow(new_id(), "acme", (Role.BUYER,), AccountStatus.ACTIVE, EPOCH)
    async with units() as uow:
        await uow.accounts.add(row)
    async with units() as uow:
        assert await uow.accounts.get(row.id) is None


async def test_responses_are_kept_for_their_retention(units: Units, clock: ManualClock) -> None:
    scope, key = new_id(), "k1"
    first = StoredResponse("print-1", 201, {"id": "x", "n": [1, 2]})
    async with units() as uow:
        assert await uow.idempotency.claim(scope, key, EPOCH) is None
        await uow.idempotency.store(scope, key, first, uow.now)
        await uow.commit()
    clock.advance(timedelta(hours=2))
    async with units() as uow:
        assert await uow.idempotency.claim(scope, key, EPOCH) == first
        assert await uow.idempotency.claim(scope, key, EPOCH + timedelta(hours=1)) is None
        second = StoredResponse("print-2", 202, {})
        await uow.idempotency.store(scope, key, second, uow.now)  # the expired one is replaced
        await uow.commit()
    async with units() as uow:
        assert await uow.idempotency.claim(scope, key, EPOCH + timedelta(hours=1)) == second
        assert await uow.idempotency.purge(EPOCH + timedelta(hours=3)) >= 1
        await uow.commit()
    async with units() as uow:
        assert await uow.idempotency.claim(scope, key, EPOCH) is None


def submitted(seller_id: str, offer_id: str) -> OfferSubmitted:
    return offer_submitted(
        offer_id,
        seller_id=seller_id,
        price="0.3300",
        billing=BillingGranularity.SECOND,
        region="eu-west",
    )


async def test_offers_are_the_sellers_own_and_follow_their_reports(
    units: Units, clock: ManualClock
) -> None:
    seller = await account(units, Role.SELLER)
    ids = sorted(new_id() for _ in range(3))
    async with units() as uow:
        made = [await uow.offers.add(submitted(seller.id, i), uow.now) for i in ids]
        await uow.commit()
    assert (made[0].status, made[0].remaining_gpus, made[0].price_micros) == ("pending", 4, 330_000)
    clock.advance(timedelta(seconds=5))
    async with units() as uow:
        for report in (
            offer_status(ids[0], OfferStatus.LIVE, 4, seller_id=seller.id),
            offer_status(ids[0], OfferStatus.LIVE, 1, seller_id=seller.id),
            offer_status(ids[0], OfferStatus.EXPIRED, 0, seller_id="someone-else"),
        ):
            await uow.offers.apply_status(report, uow.now)
        await uow.commit()
    async with units() as uow:
        shown = await uow.offers.get(seller.id, ids[0])
        assert await uow.offers.get("someone-else", ids[0]) is None
        first_page = await uow.offers.page(seller.id, None, 2)
        second_page = await uow.offers.page(seller.id, ids[1], 2)
    assert shown == replace(made[0], status="live", remaining_gpus=1, updated_at=clock.now())
    assert [o.id for o in first_page] == ids[:2]
    assert [o.id for o in second_page] == ids[2:]


def placed(buyer_id: str, order_id: str) -> OrderPlaced:
    return order_placed(
        order_id=order_id, buyer_id=buyer_id, gpus=4, price="0.5", currency=Currency.EUR
    )


def report(order: OrderPlaced, state: OrderStatus, filled: int) -> OrderStatusChanged:
    ended = state in {OrderStatus.FILLED, OrderStatus.CANCELLED}
    return order_status(
        order.order_id,
        state,
        buyer_id=order.buyer_id,
        filled=filled,
        remaining=0 if ended else 4 - filled,
    )


async def test_a_batch_of_order_reports_applies_in_order_and_never_undoes_a_newer_one(
    units: Units,
) -> None:
    buyer = await account(units)
    order = placed(buyer.id, new_id())
    async with units() as uow:
        await uow.orders.add(order, uow.now)
        await uow.orders.apply_status(report(order, OrderStatus.PARTIALLY_FILLED, 3), uow.now)
        await uow.commit()
    async with units() as uow:  # one batch, read in this order
        for state, filled in (
            (OrderStatus.CANCELLED, 2),  # fewer fills than shown: refused
            (OrderStatus.PARTIALLY_FILLED, 4),  # applies: 3 <= 4
            (OrderStatus.OPEN, 0),  # late: refused
            (OrderStatus.FILLED, 4),  # applies and ends the order
            (OrderStatus.CANCELLED, 4),  # after the end: refused
        ):
            await uow.orders.apply_status(report(order, state, filled), uow.now)
        await uow.commit()
    async with units() as uow:
        row = await uow.orders.get(buyer.id, order.order_id)
        assert await uow.orders.get("someone-else", order.order_id) is None
    assert row is not None
    assert (row.status, row.filled_gpus, row.remaining_gpus, row.max_price_micros) == (
        "filled",
        4,
        0,
        500_000,
    )


async def test_fills_are_kept_once_in_the_order_they_were_read(units: Units) -> None:
    buyer = await account(units)
    order = placed(buyer.id, new_id())
    trades = [
        trade_executed(
            trade_id=f"{order.order_id}:{n}",
            order_id=order.order_id,
            offer_id="f",
            buyer_id=buyer.id,
            seller_id="s",
            gpus=n,
            price="0.4",
            currency=Currency.EUR,
            hours=2,
            executed_at=EPOCH,
        )
        for n in (2, 1)
    ]
    async with units() as uow:
        await uow.orders.add(order, uow.now)
        for trade in (*trades, trades[0]):
            await uow.orders.add_fill(trade)
        await uow.commit()
    async with units() as uow:
        fills = await uow.orders.fills(buyer.id, order.order_id)
        assert await uow.orders.fills("someone-else", order.order_id) == []
    assert [(f.trade_id, f.gpus, f.price_micros, f.hours) for f in fills] == [
        (trades[0].trade_id, 2, 400_000, 2),
        (trades[1].trade_id, 1, 400_000, 2),
    ]


async def test_a_market_order_takes_its_held_cap_and_a_priced_order_keeps_its_own(
    units: Units,
) -> None:
    buyer = await account(units)
    market = order_placed(order_id=new_id(), buyer_id=buyer.id, gpus=2, currency=Currency.EUR)
    limit = placed(buyer.id, new_id())
    async with units() as uow:
        for order in (market, limit):
            await uow.orders.add(order, uow.now)
            await uow.orders.apply_cap(buyer.id, order.order_id, 610_000)
        await uow.orders.apply_cap("someone-else", market.order_id, 1)
        await uow.commit()
    async with units() as uow:
        shown = [await uow.orders.get(buyer.id, o.order_id) for o in (market, limit)]
    assert [row.max_price_micros for row in shown if row is not None] == [610_000, 500_000]
