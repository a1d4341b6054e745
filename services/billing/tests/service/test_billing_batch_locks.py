"""What a batch locks first (``service.locking``): the leases its stops and interruptions
change, then its owners."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from gpux_billing.service.locking import opened, owners, stopped
from gpux_contracts.billing import CreditRequested
from gpux_contracts.events import Envelope, Payload, wrap
from gpux_contracts.leases import LeaseStopRequested
from gpux_contracts.orders import OrderCancelRequested, OrderStatus, OrderStatusChanged
from gpux_devinfra.testing.payloads import (
    credit_requested,
    interruption_requested,
    order_status,
    trade_executed,
)

pytestmark = pytest.mark.unit

T0 = datetime(2026, 11, 30, 12, tzinfo=UTC)


def event(payload: Payload) -> Envelope[Payload]:
    return wrap(payload, producer="gateway", occurred_at=T0)


def credit(account: str) -> CreditRequested:
    return credit_requested(account, 1, credit_id=f"c-{account}", reference="r")


def status(buyer: str, value: OrderStatus) -> OrderStatusChanged:
    return order_status(f"o-{buyer}", value, buyer_id=buyer, gpu="g")


def test_a_batch_locks_the_owners_it_may_post_for_in_key_order() -> None:
    batch = [
        event(credit("b3")),
        event(credit("b1")),
        event(credit("b3")),
        event(status("b2", OrderStatus.CANCELLED)),  # releases a hold: posts
        event(status("b9", OrderStatus.PARTIALLY_FILLED)),  # posts nothing
        event(OrderCancelRequested(order_id="o", buyer_id="b8", gpu="g")),  # forwarded only
        event(LeaseStopRequested(lease_id="l2", buyer_id="b0", requested_at=T0)),
        event(LeaseStopRequested(lease_id="l1", buyer_id="b0", requested_at=T0)),
    ]
    assert owners(batch) == ["b0", "b1", "b2", "b3"]
    assert stopped(batch) == ["l1", "l2"]


def test_a_batch_locks_the_leases_the_book_interrupts_but_no_owner_for_them() -> None:
    interruption = interruption_requested("l3", noticed_at=T0, buyer_id="b7", gpu="g", gpus=1)
    batch = [
        event(interruption),
        event(LeaseStopRequested(lease_id="l1", buyer_id="b0", requested_at=T0)),
    ]
    assert stopped(batch) == ["l1", "l3"]
    assert owners(batch) == ["b0"]  # an interruption posts nothing: its lease is enough


def test_a_batch_of_trades_locks_the_leases_it_opens() -> None:
    batch = [
        event(trade_executed(trade_id="t2", buyer_id="b2", price="1", executed_at=T0)),
        event(trade_executed(trade_id="t1", buyer_id="b1", price="1", executed_at=T0)),
        event(trade_executed(trade_id="t2", buyer_id="b2", price="1", executed_at=T0)),
    ]
    assert opened(batch) == ["t1", "t2"]  # where an interruption before its trade is kept
    assert stopped(batch) == []
    assert owners(batch) == ["b1", "b2"]
