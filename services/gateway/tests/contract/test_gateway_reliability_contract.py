"""The reliability view on both stores: per offer and per seller the counts with the largest
total (a late or replayed change never steps them back; equal totals take the later), read
per seller with the named offers of its own, written at the commit."""

from __future__ import annotations

import pytest

from gpux_contracts.ids import new_id
from gpux_gateway.reliability.repository import SellerReliability

from ..reliability_events import counts
from ..reliability_events import reliability_changed as change
from .conftest import Units

pytestmark = pytest.mark.integration


async def test_nothing_counted_reads_as_zeros(units: Units) -> None:
    async with units() as uow:
        assert await uow.reliability.of_seller(new_id(), [new_id()]) == SellerReliability()


async def test_the_largest_totals_stay_in_one_batch_and_across_batches(units: Units) -> None:
    seller, first, second = new_id(), new_id(), new_id()
    async with units() as uow:
        await uow.reliability.apply(change(seller, first, counts(ready=1), counts(ready=1)))
        await uow.reliability.apply(change(seller, second, counts(failed=1), counts(1, 1)))
        await uow.reliability.apply(change(seller, first, counts(), counts(ready=1)))  # late
        await uow.commit()
    async with units() as uow:
        await uow.reliability.apply(change(seller, second, counts(reclaimed=1), counts(1, 0, 1)))
        await uow.commit()
    async with units() as uow:
        held = await uow.reliability.of_seller(seller, [first, second, new_id()])
    assert held == SellerReliability(
        seller=counts(ready=1, reclaimed=1),  # the same total as (1, 1, 0), read later
        offers={first: counts(ready=1), second: counts(reclaimed=1)},
    )


async def test_a_seller_reads_only_its_own_offers(units: Units) -> None:
    seller, other, offer_id = new_id(), new_id(), new_id()
    async with units() as uow:
        await uow.reliability.apply(change(other, offer_id, counts(failed=2), counts(failed=2)))
        await uow.commit()
    async with units() as uow:
        assert await uow.reliability.of_seller(seller, [offer_id]) == SellerReliability()
        theirs = await uow.reliability.of_seller(other, [offer_id])
    assert (theirs.seller, theirs.of(offer_id)) == (counts(failed=2), counts(failed=2))


async def test_nothing_is_kept_when_the_unit_rolls_back(units: Units) -> None:
    seller, offer_id = new_id(), new_id()
    async with units() as uow:
        await uow.reliability.apply(change(seller, offer_id, counts(ready=1), counts(ready=1)))
        await uow.rollback()
    async with units() as uow:
        assert await uow.reliability.of_seller(seller, [offer_id]) == SellerReliability()


async def test_counts_beyond_32_bits_are_kept_as_billing_counts_them(units: Units) -> None:
    seller, offer_id, many = new_id(), new_id(), 2**31
    async with units() as uow:
        await uow.reliability.apply(
            change(seller, offer_id, counts(ready=many), counts(ready=many, failed=many))
        )
        await uow.commit()
    async with units() as uow:
        held = await uow.reliability.of_seller(seller, [offer_id])
    assert (held.seller, held.of(offer_id)) == (counts(many, many), counts(ready=many))
