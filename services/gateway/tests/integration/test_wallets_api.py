"""Wallets through the gateway: top-ups become billing commands, balances come from billing."""

from __future__ import annotations

from typing import Any

from gpux_contracts.topics import BILLING_COMMANDS
from gpux_devinfra.testing.kafka import published


async def _commands_about(gateway: Any, topup_id: str, settle_s: float = 2.0) -> list[Any]:
    """Every billing.commands record about one top-up, as (key, envelope)."""
    found = await published(
        gateway.settings,
        BILLING_COMMANDS,
        lambda body: body["payload"].get("topup_id") == topup_id,
        settle_s=settle_s,
    )
    return [(record.key, record.body) for record in found]


async def test_topup_is_one_command_for_billing(gateway: Any, sign_up: Any) -> None:
    buyer = await sign_up(["buyer"])
    body = {"amount": "25.00", "currency": "EUR"}
    headers = {"Idempotency-Key": "topup-0001"}
    async with gateway.client(buyer["key"]) as client:
        first = await client.post("/v1/topups", json=body, headers=headers)
        again = await client.post("/v1/topups", json=body, headers=headers)
    assert first.status_code == 202, first.text
    assert (again.status_code, again.content) == (first.status_code, first.content)
    accepted = first.json()
    assert accepted["status"] == "requested"
    assert accepted["provider"] == "manual"
    assert (accepted["amount"], accepted["currency"]) == ("25.00", "EUR")
    commands = await _commands_about(gateway, accepted["topup_id"])
    assert len(commands) == 1
    key, command = commands[0]
    assert key == buyer["id"]
    assert command["event_type"] == "topup.requested"
    assert command["payload"]["account_id"] == buyer["id"]
    assert command["payload"]["amount"] == "25.00"


async def test_topups_are_for_buyers_and_well_formed(gateway: Any, sign_up: Any) -> None:
    seller = await sign_up(["seller"])
    buyer = await sign_up(["buyer"])
    async with gateway.client(seller["key"]) as client:
        refused = await client.post("/v1/topups", json={"amount": "5", "currency": "USD"})
        balances = await client.get("/v1/accounts/me/balances")
    assert refused.status_code == 403
    assert balances.status_code == 403
    async with gateway.client(buyer["key"]) as client:
        for amount in ("0", "-1", "1.001", "1000000", 5.5):
            bad = await client.post("/v1/topups", json={"amount": amount, "currency": "USD"})
            assert bad.status_code == 422, amount
        bad = await client.post("/v1/topups", json={"amount": "5", "currency": "CHF"})
        assert bad.status_code == 422
        assert (await client.get("/v1/accounts/me/balances")).json() == {"items": []}
        confirm = await client.post("/v1/admin/topups/01ABC/confirm")
    assert confirm.status_code == 403
