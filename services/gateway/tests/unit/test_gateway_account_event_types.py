"""The public account event types and an event's stable id and public shape."""

from __future__ import annotations

from datetime import UTC, datetime

from gpux_gateway.notifications.events import AccountEvent
from gpux_gateway.notifications.types import (
    ACCOUNT_EVENT_TYPES,
    AccountEventType,
    unknown_types,
)

AT = datetime(2026, 1, 1, 12, 30, tzinfo=UTC)


def test_the_public_types_are_dotted_names_of_what_an_account_hears_of() -> None:
    assert {
        "order.updated",
        "order.filled",
        "offer.updated",
        "lease.opened",
        "lease.provisioning",
        "lease.ready",
        "lease.failed",
        "lease.interruption_notice",
        "lease.ended",
        "balance.updated",
        "payout.updated",
    } <= ACCOUNT_EVENT_TYPES
    assert all(name.count(".") == 1 and name == name.lower() for name in ACCOUNT_EVENT_TYPES)
    assert "lease.charged" not in ACCOUNT_EVENT_TYPES


def test_a_subscription_names_public_types_or_every_type() -> None:
    assert unknown_types(["order.updated", "*", "lease.ended"]) == []
    assert unknown_types(["order.updated", "lease.charged", "Order.Updated"]) == [
        "lease.charged",
        "Order.Updated",
    ]


def test_an_events_id_is_stable_per_source_account_and_type() -> None:
    def event(source: str, account: str, type_: AccountEventType) -> AccountEvent:
        return AccountEvent.of(source, account, type_, {}, AT)

    one = event("src1", "acc1", AccountEventType.LEASE_ENDED)
    assert one.id.startswith("evt_")
    assert one.id == event("src1", "acc1", AccountEventType.LEASE_ENDED).id
    others = {
        event("src2", "acc1", AccountEventType.LEASE_ENDED).id,
        event("src1", "acc2", AccountEventType.LEASE_ENDED).id,
        event("src1", "acc1", AccountEventType.LEASE_OPENED).id,
    }
    assert one.id not in others
    assert len(others) == 3


def test_the_public_shape_is_the_same_on_every_channel() -> None:
    event = AccountEvent.of("src", "acc1", AccountEventType.ORDER_FILLED, {"gpus": 2}, AT)
    assert event.public() == {
        "id": event.id,
        "type": "order.filled",
        "created_at": "2026-01-01T12:30:00Z",
        "account_id": "acc1",
        "data": {"gpus": 2},
    }
