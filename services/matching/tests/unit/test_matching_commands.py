"""Commands in the log's form: every kind round-trips, and commands logged before a field
existed decode with the default that means the old behaviour."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest

from gpux_matching.domain import (
    AddOffer,
    CancelOrder,
    ChangeOffer,
    Command,
    Expire,
    MatchingEngine,
    PlaceOrder,
    ReclaimLease,
    ReleaseLease,
    SetFx,
    WithdrawOffer,
    apply,
    decode_command,
    encode_command,
)

pytestmark = pytest.mark.unit

COMMANDS: list[Command] = [
    AddOffer(1, "f1", "s1", "h100", "on_demand", 2_000_000, "EUR", 4),
    AddOffer(
        2,
        "f2",
        "s1",
        "h100",
        "on_demand",
        2_000_000,
        "EUR",
        4,
        "second",
        "eu",
        2,
        99,
        interruptible_price_micros=1_000_000,
        notice_s=600,
    ),
    ChangeOffer(3, "f1", 1_900_000, 6, interruptible_price_micros=900_000),
    WithdrawOffer(4, "f1"),
    ReleaseLease(5, "b1:b1", "f1", 2),
    ReclaimLease(6, "f1", "b1:b1"),
    PlaceOrder(7, "b1", "u1", "h100", 2, "EUR", "limit", 2_000_000, "on_demand"),
    CancelOrder(8, "b1"),
    Expire(9),
    SetFx(10, {"USD": Decimal("900000.5")}),
]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: type(c).__name__)
def test_every_command_round_trips_through_the_log_form(command: Command) -> None:
    kind, body = encode_command(command)
    assert decode_command(kind, body) == command
    assert decode_command(kind, json.loads(body)) == command


def test_the_new_commands_have_their_method_names_as_kinds() -> None:
    assert encode_command(ReleaseLease(5, "b1:b1", "f1", 2))[0] == "release_lease"
    assert encode_command(ReclaimLease(6, "f1", "b1:b1"))[0] == "reclaim_lease"


def test_commands_logged_before_capacity_decode_as_single_tier_with_the_default_notice() -> None:
    old_offer = {
        "now": 1,
        "offer_id": "f1",
        "seller_id": "s1",
        "gpu": "h100",
        "tier": "interruptible",
        "price_micros": 2_000_000,
        "currency": "EUR",
        "gpus": 4,
        "billing": "hour",
        "region": None,
        "min_hours": None,
        "available_until": None,
    }
    command = decode_command("add_offer", json.dumps(old_offer))
    assert isinstance(command, AddOffer)
    assert (command.interruptible_price_micros, command.notice_s) == (None, 120)
    change = decode_command("change_offer", {"now": 2, "offer_id": "f1", "price_micros": 1})
    assert change == ChangeOffer(2, "f1", 1, None, None)


def test_apply_calls_the_method_of_each_new_kind() -> None:
    engine = MatchingEngine({"EUR": 1_000_000})
    apply(engine, AddOffer(1, "f1", "s1", "h100", "on_demand", 2_000_000, "EUR", 4))
    result = apply(engine, ReleaseLease(2, "nobody", "f1", 1))
    assert result.rejection is not None
    assert apply(engine, ReclaimLease(3, "f1", "nobody")).rejection is not None
