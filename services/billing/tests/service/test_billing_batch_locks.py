"""What a batch locks first (``service.locking``): the leases its stops and interruptions
change, then its owners."""

from __future__ import annotations

import pytest

from gpux_billing.service.locking import opened, owners, stopped
from gpux_contracts.billing import CreditRequested
from gpux_contracts.leases import LeaseStopRequested
from gpux_contracts.orders import OrderCancelRequested, OrderStatus, OrderStatusChanged
from gpux_devinfra.testing.payloads import (
    credit_requested,
    interruption_requested,
    order_status,
    trade_executed,
)

from .billing_desk import T0, envelope

pytestmark = pytest.mark.unit


def credit(account: str) -> CreditRequested:
    return credit_requested(account, 1, credit_id=f"c-{account}", reference="r")


def status(buyer: str, value: OrderStatus) -> OrderStatusChanged:
    return order_status(f"o-{buyer}", value, buyer_id=buyer, gpu="g")


def test_a_batch_locks_the_owners_it_may_post_for_in_key_order() -> None:
    batch = [
        envelope(credit("b3")),
        envelope(credit("b1")),
        envelope(credit("b3")),
        envelope(status("b2", OrderStatus.CANCELLED)),  # releases a hold: posts
        envelope(status("b9", OrderStatus.PARTIALLY_FILLED)),  # posts nothing
        envelope(OrderCancelRequested(order_id="o", buyer_id="b8", gpu="g")),  # forwarded only
        envelope(LeaseStopRequested(lease_id="l2", buyer_id="b0", requested_at=T0)),
        envelope(LeaseStopRequested(lease_id="l1", buyer_id="b0", requested_at=T0)),
    ]
    assert owners(batch) == ["b0", "b1", "b2", "b3"]
    assert stopped(batch) == ["l1", "l2"]


def test_a_batch_locks_the_leases_the_book_interrupts_but_no_owner_for_them() -> None:
    interruption = interruption_requested("l3", noticed_at=T0, buyer_id="b7", gpu="g", gpus=1)
    batch = [
        envelope(interruption),
        envelope(LeaseStopRequested(lease_id="l1", buyer_id="b0", requested_at=T0)),
    ]
    assert stopped(batch) == ["l1", "l3"]
    assert owners(batch) == ["b0"]  # an interruption posts nothing: its lease is enough


def test_a_batch_of_trades_locks_the_leases_it_opens() -> None:
    batch = [
        envelope(trade_executed(trade_id="t2", buyer_id="b2", price="1", executed_at=T0)),
        envelope(trade_executed(trade_id="t1", buyer_id="b1", price="1", executed_at=T0)),
        envelope(trade_executed(trade_id="t2", buyer_id="b2", price="1", executed_at=T0)),
    ]
    assert opened(batch) == ["t1", "t2"]  # where an interruption before its trade is kept
    assert stopped(batch) == []
    assert owners(batch) == ["b1", "b2"]
