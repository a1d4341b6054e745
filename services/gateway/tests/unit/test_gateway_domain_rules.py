"""The rules that left the routes and the SQL: order reports, offer changes, lease totals."""

from __future__ import annotations

from decimal import Decimal

import pytest

from gpux_contracts.orders import OrderStatus
from gpux_gateway.domain.leases import totals_apply
from gpux_gateway.domain.offers import CLOSED, change_problem, is_closed
from gpux_gateway.domain.orders import FINAL, is_final, report_applies

pytestmark = pytest.mark.unit


def test_an_ended_order_stays_ended_and_fills_never_go_down() -> None:
    assert report_applies(held_status="open", held_filled_gpus=2, filled_gpus=2)
    assert report_applies(held_status="partially_filled", held_filled_gpus=2, filled_gpus=3)
    assert not report_applies(held_status="partially_filled", held_filled_gpus=3, filled_gpus=2)
    for ended in FINAL:
        assert is_final(ended)
        assert not report_applies(held_status=ended, held_filled_gpus=0, filled_gpus=4)
    assert {s.value for s in OrderStatus} >= set(FINAL)  # the contract's names


def test_a_closed_offer_is_over_and_a_change_must_change_something() -> None:
    assert all(is_closed(s) for s in CLOSED)
    assert not is_closed("live")
    assert not is_closed("pending")
    assert not is_closed("exhausted")  # on the book: live again when GPUs come back
    assert change_problem(None, None) == "change price, interruptible price or gpus"
    assert change_problem(None, None, None) == change_problem(None, None)
    assert change_problem(Decimal("0.3"), None) is None
    assert change_problem(None, 2) is None
    assert change_problem(None, None, Decimal("0.2")) is None


def test_the_totals_of_the_highest_period_read_stay() -> None:
    assert totals_apply(None, 0)
    assert totals_apply(2, 2)
    assert totals_apply(2, 3)
    assert not totals_apply(3, 2)
