"""The payouts repository on both stores: the seller's own payouts in id order, any seller's
for the admin, and billing's decisions applied only upward (pending_request < pending < paid,
rejected), written at the commit."""

from __future__ import annotations

from datetime import timedelta

import pytest

from gpux_contracts.accounts import Role
from gpux_contracts.ids import new_id
from gpux_contracts.money import Currency
from gpux_contracts.payouts import PayoutRejection, PayoutStatus, PayoutStatusChanged
from gpux_gateway.adapters.memory.unit_of_work import EPOCH
from gpux_gateway.payouts.repository import PayoutRow

from .accounts import an_account
from .conftest import Units

pytestmark = pytest.mark.integration


def a_payout(seller_id: str) -> PayoutRow:
    return PayoutRow(
        id=new_id(),
        seller_id=seller_id,
        currency=Currency.EUR,
        amount_micros=50_000_000,
        method="manual",
        destination="IBAN DE89",
        status=PayoutStatus.PENDING_REQUEST,
        reason=None,
        reference="",
        created_at=EPOCH,
        updated_at=EPOCH,
    )


def decided(
    payout: PayoutRow, status: PayoutStatus, minutes: int, **extra: object
) -> PayoutStatusChanged:
    return PayoutStatusChanged.model_validate(
        {
            "payout_id": payout.id,
            "seller_id": payout.seller_id,
            "currency": "EUR",
            "amount": "50.00",
            "status": status,
            "changed_at": EPOCH + timedelta(minutes=minutes),
            **extra,
        }
    )


async def test_a_sellers_payouts_are_its_own_in_id_order(units: Units) -> None:
    alice, bob = await an_account(units, Role.SELLER), await an_account(units, Role.SELLER)
    first, second = a_payout(alice), a_payout(alice)
    async with units() as uow:
        await uow.payouts.add(first)
        await uow.payouts.add(second)
        await uow.commit()
    async with units() as uow:
        assert await uow.payouts.page(alice, None, 10) == [first, second]
        assert await uow.payouts.page(alice, first.id, 10) == [second]
        assert await uow.payouts.page(alice, None, 1) == [first]
        assert await uow.payouts.page(bob, None, 10) == []
        assert await uow.payouts.get(alice, first.id) == first
        assert await uow.payouts.get(bob, first.id) is None
        assert await uow.payouts.find(first.id) == first
        assert await uow.payouts.find(new_id()) is None


async def test_decisions_apply_upward_only(units: Units) -> None:
    alice = await an_account(units, Role.SELLER)
    paid, rejected = a_payout(alice), a_payout(alice)
    async with units() as uow:
        await uow.payouts.add(paid)
        await uow.payouts.add(rejected)
        await uow.commit()
    reason = PayoutRejection.INSUFFICIENT_SELLER_PAYABLE
    async with units() as uow:
        await uow.payouts.apply(decided(paid, PayoutStatus.PENDING, 1, reference="manual"))
        await uow.payouts.apply(decided(paid, PayoutStatus.PAID, 2, reference="BANK-1"))
        await uow.payouts.apply(decided(paid, PayoutStatus.PENDING, 3, reference="manual"))
        await uow.payouts.apply(decided(rejected, PayoutStatus.REJECTED, 1, reason=reason))
        await uow.payouts.apply(decided(rejected, PayoutStatus.PAID, 2))  # same rank: ignored
        await uow.payouts.apply(decided(a_payout(alice), PayoutStatus.PAID, 1))  # unknown
        await uow.commit()
    async with units() as uow:
        shown = await uow.payouts.get(alice, paid.id)
        refused = await uow.payouts.get(alice, rejected.id)
    assert shown is not None
    assert (shown.status, shown.reference, shown.reason) == (PayoutStatus.PAID, "BANK-1", None)
    assert shown.updated_at == EPOCH + timedelta(minutes=2)
    assert refused is not None
    assert (refused.status, refused.reason) == (PayoutStatus.REJECTED, reason.value)
