"""What a batch locks first (``service.locking``): its stops' leases, then its owners."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

import pytest

from gpux_billing.service.locking import owners, stopped
from gpux_contracts.billing import CreditRequested
from gpux_contracts.events import Envelope, Payload, wrap
from gpux_contracts.leases import LeaseStopRequested
from gpux_contracts.money import Currency
from gpux_contracts.orders import OrderCancelRequested, OrderStatus, OrderStatusChanged

pytestmark = pytest.mark.unit

T0 = datetime(2026, 11, 30, 12, tzinfo=UTC)


def event(payload: Payload) -> Envelope[Payload]:
    return wrap(payload, producer="gateway", occurred_at=T0)


def credit(account: str) -> CreditRequested:
    return CreditRequested(
        credit_id=f"c-{account}",
        account_id=account,
        amount=Decimal(1),
        currency=Currency.USD,
        reference="r",
        requested_by="admin",
    )


def status(buyer: str, value: OrderStatus) -> OrderStatusChanged:
    return OrderStatusChanged(
        order_id=f"o-{buyer}", buyer_id=buyer, gpu="g", status=value, filled_gpus=0,
        remaining_gpus=0,
    )  # fmt: skip


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
