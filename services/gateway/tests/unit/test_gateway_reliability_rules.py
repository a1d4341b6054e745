"""An order's ``min_reliability`` as the schema reads it (a decimal string 0..1, at most four
places, nothing else), as it is stored and shown; an offer's counts as shown; a unit's changes
reduced to each offer's and each seller's largest (``LargestCounts``)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from gpux_contracts.reliability import (
    ReliabilityChanged,
    ReliabilityCounts,
    min_reliability_bp,
    supersedes,
)
from gpux_gateway.adapters.memory.unit_of_work import EPOCH
from gpux_gateway.domain.reliability import LargestCounts, shown_minimum
from gpux_gateway.orders.schemas import OrderIn
from gpux_gateway.reliability.repository import SellerReliability
from gpux_gateway.reliability.schemas import counts_out, reliability_out

from ..reliability_events import reliability_changed

pytestmark = pytest.mark.unit

ORDER = {"gpu": "rtx-4090", "gpus": 2, "type": "market", "currency": "EUR"}
MESSAGE = (
    'min_reliability must be a decimal string from 0 to 1 with at most four places, e.g. "0.95"'
)


def read(value: Any) -> Decimal | None:
    return OrderIn.model_validate({**ORDER, "min_reliability": value}).min_reliability


@pytest.mark.parametrize(
    ("written", "minimum"),
    [
        ("0", Decimal(0)),
        ("0.5", Decimal("0.5")),
        ("0.9500", Decimal("0.95")),
        ("0.0001", Decimal("0.0001")),
        ("1", Decimal(1)),
        ("1.0000", Decimal(1)),
        (None, None),
    ],
)
def test_a_decimal_string_from_0_to_1_with_four_places_is_a_minimum(
    written: str | None, minimum: Decimal | None
) -> None:
    assert read(written) == minimum


@pytest.mark.parametrize(
    "written",
    [
        *("1.5", "1.0001", "-0.1", "0.12345", ".5", "5e-1", " 0.5", "0,5", "", "abc"),
        *("0.95\n", "1.0\n", "0\n", "0.5\r\n", "0.5 "),
        *(0.5, 1, True),
    ],
)
def test_anything_else_is_refused_with_one_clear_message(written: Any) -> None:
    with pytest.raises(ValidationError) as refused:
        read(written)
    (error,) = refused.value.errors()
    assert (error["loc"], error["msg"]) == (("min_reliability",), MESSAGE)


def test_an_order_without_a_minimum_takes_any_seller() -> None:
    assert OrderIn.model_validate(ORDER).min_reliability is None


@given(st.integers(min_value=0, max_value=10_000))
def test_a_stored_minimum_is_shown_at_four_places_and_reads_back(basis_points: int) -> None:
    shown = shown_minimum(basis_points)
    assert shown is not None
    assert shown.as_tuple().exponent == -4
    assert read(format(shown, "f")) == shown
    assert min_reliability_bp(shown) == basis_points
    assert shown_minimum(None) is None


def test_counts_show_their_rate_rounded_down_and_none_without_a_count() -> None:
    third = counts_out(ReliabilityCounts(ready_in_time=2, failed=1))
    assert third.model_dump(mode="json") == {
        "ready_in_time": 2,
        "failed": 1,
        "reclaimed": 0,
        "rate": "0.6666",
    }
    assert counts_out(ReliabilityCounts()).rate is None
    assert (
        counts_out(ReliabilityCounts(ready_in_time=3)).model_dump(mode="json")["rate"] == "1.0000"
    )


def test_an_offer_shows_its_own_counts_and_its_sellers() -> None:
    record = SellerReliability(
        seller=ReliabilityCounts(ready_in_time=1, reclaimed=1),
        offers={"o1": ReliabilityCounts(reclaimed=1)},
    )
    assert reliability_out(record, "o1").offer.rate == Decimal(0)
    assert reliability_out(record, "o2").offer == counts_out(ReliabilityCounts())
    assert reliability_out(record, "o2").seller.rate == Decimal("0.5")


def changed(seller_id: str, offer_id: str, offer: int, seller: int, n: int) -> ReliabilityChanged:
    return reliability_changed(
        seller_id,
        offer_id,
        ReliabilityCounts(ready_in_time=offer),
        ReliabilityCounts(failed=seller),
        lease_id=f"L{n}",
        as_of=EPOCH + timedelta(seconds=n),
    )


def test_a_units_changes_come_to_each_rows_largest_in_key_order() -> None:
    largest = LargestCounts()
    assert not largest
    for each in (
        changed("s2", "o3", 1, 1, 0),
        changed("s1", "o1", 2, 2, 1),
        changed("s2", "o3", 2, 3, 2),
        changed("s1", "o1", 1, 1, 3),  # late: counted less than the unit holds
        changed("s2", "o2", 2, 3, 4),  # s2's total equals L2's: the later is kept
    ):
        largest.add(each)
    assert largest
    assert [(c.offer_id, c.lease_id) for c in largest.by_offer()] == [
        ("o1", "L1"),
        ("o2", "L4"),
        ("o3", "L2"),
    ]
    assert [(c.seller_id, c.lease_id) for c in largest.by_seller()] == [("s1", "L1"), ("s2", "L4")]


CHANGES = st.lists(
    st.builds(
        changed,
        st.sampled_from(["s1", "s2", "s3"]),
        st.sampled_from(["o1", "o2", "o3", "o4"]),
        st.integers(0, 4),
        st.integers(0, 4),
        st.integers(0, 1000),
    ),
    max_size=12,
)


Side = Callable[[ReliabilityChanged], tuple[str, ReliabilityCounts]]
"""One table's view of a change: its key and its counts."""


def offer_side(c: ReliabilityChanged) -> tuple[str, ReliabilityCounts]:
    return c.offer_id, c.offer


def seller_side(c: ReliabilityChanged) -> tuple[str, ReliabilityCounts]:
    return c.seller_id, c.seller


def one_by_one(
    held: dict[str, ReliabilityCounts], changes: list[ReliabilityChanged], side: Side
) -> dict[str, ReliabilityCounts]:
    """What applying ``changes`` one at a time, in order, keeps per key of one table."""
    kept = dict(held)
    for key, counts in map(side, changes):
        if supersedes(counts, kept.get(key)):
            kept[key] = counts
    return kept


@given(CHANGES, CHANGES)
def test_writing_the_largest_keeps_what_writing_each_change_in_order_keeps(
    before: list[ReliabilityChanged], unit: list[ReliabilityChanged]
) -> None:
    largest = LargestCounts()
    for each in unit:
        largest.add(each)
    for side, reduced in ((offer_side, largest.by_offer()), (seller_side, largest.by_seller())):
        held = one_by_one({}, before, side)
        assert one_by_one(held, reduced, side) == one_by_one(held, unit, side)
