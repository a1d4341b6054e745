"""The engine's words against the contract's: the same enums where the words are the same,
and every status the book reports is one the contract knows."""

from __future__ import annotations

import pytest

from gpux_contracts import offers, orders
from gpux_matching.domain import (
    OfferStatus,
    OfferUpdate,
    OrderStatus,
    OrderType,
    OrderUpdate,
    Reason,
    Tier,
    TimeInForce,
)
from gpux_matching.domain.levels import BOOK_TIERS
from gpux_matching.domain.validation import OFFER_TIERS, ORDER_TIERS
from gpux_matching.service.publishing import offer_status, order_status

pytestmark = pytest.mark.unit


def test_tiers_order_types_and_times_in_force_are_the_contracts_own() -> None:
    assert Tier is orders.OrderTier
    assert OrderType is orders.OrderType
    assert TimeInForce is orders.TimeInForce


def test_an_order_tier_is_an_offer_tier_or_any() -> None:
    assert {t.value for t in Tier} == {t.value for t in offers.Tier} | {"any"}
    assert set(OFFER_TIERS) == set(offers.Tier)
    assert set(ORDER_TIERS) == set(Tier)
    assert [str(t) for t in BOOK_TIERS] == [str(t) for t in offers.Tier]


@pytest.mark.parametrize("status", list(OrderStatus))
def test_every_order_status_of_the_engine_is_a_contract_status(status: OrderStatus) -> None:
    assert orders.OrderStatus(status.value).value == status.value
    update = OrderUpdate("o1", status, 2, 0, 0, 2, None)
    assert order_status(update) == orders.OrderStatus(status.value)


@pytest.mark.parametrize("status", list(OfferStatus))
def test_every_offer_status_of_the_engine_is_a_contract_status(status: OfferStatus) -> None:
    assert offers.OfferStatus(status.value).value == status.value
    update = OfferUpdate("f1", status, 2, 0, 0, None)
    assert offer_status(update) == (offers.OfferStatus(status.value), None)


@pytest.mark.parametrize("reason", list(Reason))
def test_a_rejection_is_reported_with_its_reason_value(reason: Reason) -> None:
    update = OfferUpdate("f1", OfferStatus.REJECTED, 2, 0, 0, reason)
    reported = offer_status(update)
    if reason == Reason.DUPLICATE_ID:
        assert reported is None  # the offer on the book stays as it is
    elif reason == Reason.EXPIRED_ON_ARRIVAL:
        assert reported == (offers.OfferStatus.EXPIRED, None)
    else:
        assert reported == (offers.OfferStatus.REJECTED, reason.value)
