"""Sellers' payouts through the real HTTP API: the request as one billing command (idempotent),
the list and the status from billing's events, the 422s, tenancy and the admin's routes."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from gpux_contracts.money import Currency
from gpux_contracts.payouts import PayoutRejection, PayoutStatus, PayoutStatusChanged
from gpux_contracts.topics import BILLING_COMMANDS, BILLING_PAYOUTS
from gpux_devinfra.testing.kafka import publish_payloads, published
from gpux_devinfra.testing.waiting import eventually
from gpux_platform.clock import SystemClock

from .conftest import ADMIN_KEY, RunningGateway

URL = "/v1/payouts"
BODY = {"currency": "EUR", "amount": "50.00", "destination": "IBAN DE89 ...3000"}


async def commands(gateway: RunningGateway, payout_id: str) -> list[tuple[str, Any]]:
    found = await published(
        gateway.settings,
        BILLING_COMMANDS,
        lambda body: body["payload"].get("payout_id") == payout_id,
        settle_s=1.5,
    )
    return [(record.key, record.body) for record in found]


def decided(
    payout: dict[str, Any], seller_id: str, status: PayoutStatus, **extra: Any
) -> PayoutStatusChanged:
    return PayoutStatusChanged(
        payout_id=payout["id"],
        seller_id=seller_id,
        currency=Currency.EUR,
        amount=Decimal(payout["amount"]),
        status=status,
        changed_at=SystemClock().now(),
        **extra,
    )


async def test_a_request_is_one_command_and_follows_billings_decisions(
    gateway: RunningGateway, sign_up: Any
) -> None:
    seller = await sign_up(["seller"])
    headers = {"Idempotency-Key": "payout-0001"}
    async with gateway.client(seller["key"]) as client:
        first = await client.post(URL, json=BODY, headers=headers)
        again = await client.post(URL, json=BODY, headers=headers)
        assert first.status_code == 202, first.text
        assert (again.status_code, again.json()) == (202, first.json())
        payout = first.json()
        assert (payout["status"], payout["amount"], payout["method"]) == (
            "pending_request",
            "50.00",
            "manual",
        )
        ((key, command),) = await commands(gateway, payout["id"])
        assert (key, command["event_type"]) == (seller["id"], "payout.requested")
        assert command["payload"]["destination"] == BODY["destination"]
        assert (command["payload"]["amount"], command["payload"]["currency"]) == ("50.00", "EUR")
        pending = decided(payout, seller["id"], PayoutStatus.PENDING, reference="manual")
        paid = decided(payout, seller["id"], PayoutStatus.PAID, reference="BANK-9")
        await publish_payloads(
            gateway.settings,
            BILLING_PAYOUTS,
            "billing",
            [(seller["id"], pending), (seller["id"], paid), (seller["id"], pending)],
        )

        async def shown() -> dict[str, Any]:
            body: dict[str, Any] = (await client.get(f"{URL}/{payout['id']}")).json()
            return body

        final = await eventually(shown, lambda p: p["status"] == "paid", what="payout paid")
        assert final["reference"] == "BANK-9"
        # A later event of the seller (same key: read after the late pending) shows that the
        # late pending was applied by then, and changed nothing.
        second = (await client.post(URL, json=BODY)).json()
        marker = decided(second, seller["id"], PayoutStatus.PENDING)
        await publish_payloads(
            gateway.settings, BILLING_PAYOUTS, "billing", [(seller["id"], marker)]
        )

        async def second_shown() -> dict[str, Any]:
            body: dict[str, Any] = (await client.get(f"{URL}/{second['id']}")).json()
            return body

        await eventually(second_shown, lambda p: p["status"] == "pending")
        assert (await shown())["status"] == "paid"
        listed = (await client.get(URL)).json()
    assert [p["id"] for p in listed["items"]] == sorted([payout["id"], second["id"]])


async def test_a_rejection_shows_its_reason(gateway: RunningGateway, sign_up: Any) -> None:
    seller = await sign_up(["seller"])
    async with gateway.client(seller["key"]) as client:
        payout = (await client.post(URL, json=BODY)).json()
        reason = PayoutRejection.INSUFFICIENT_SELLER_PAYABLE
        rejected = decided(payout, seller["id"], PayoutStatus.REJECTED, reason=reason)
        await publish_payloads(
            gateway.settings, BILLING_PAYOUTS, "billing", [(seller["id"], rejected)]
        )

        async def shown() -> dict[str, Any]:
            body: dict[str, Any] = (await client.get(f"{URL}/{payout['id']}")).json()
            return body

        final = await eventually(shown, lambda p: p["status"] == "rejected")
    assert final["reason"] == "insufficient_seller_payable"


async def test_bad_requests_and_amounts_below_the_minimum_are_422(
    gateway: RunningGateway, sign_up: Any
) -> None:
    seller = await sign_up(["seller"])
    bad_bodies = [
        {**BODY, "amount": "9.99"},  # below the minimum (10.00)
        {**BODY, "amount": "0"},
        {**BODY, "amount": "-20"},
        {**BODY, "amount": "10.001"},
        {**BODY, "amount": 50.5},
        {**BODY, "currency": "CHF"},
        {**BODY, "destination": ""},
        {**BODY, "destination": "x" * 201},
        {**BODY, "destination": "line\nbreak"},
        {"currency": "EUR", "amount": "50.00"},
        {**BODY, "method": "sepa"},
    ]
    async with gateway.client(seller["key"]) as client:
        for body in bad_bodies:
            answer = await client.post(URL, json=body)
            assert answer.status_code == 422, body
            assert answer.headers["content-type"] == "application/problem+json"
        minimum = await client.post(URL, json={**BODY, "amount": "9.99"})
        assert minimum.json()["errors"][0]["loc"] == ["body", "amount"]
        assert (await client.get(URL)).json()["items"] == []


async def test_payouts_are_the_sellers_own(gateway: RunningGateway, sign_up: Any) -> None:
    seller, other, buyer = (
        await sign_up(["seller"]),
        await sign_up(["seller"]),
        await sign_up(["buyer"]),
    )
    async with gateway.client(seller["key"]) as client:
        payout = (await client.post(URL, json=BODY)).json()
    async with gateway.client(other["key"]) as client:
        assert (await client.get(f"{URL}/{payout['id']}")).status_code == 404
        assert (await client.get(URL)).json()["items"] == []
    async with gateway.client(buyer["key"]) as client:
        assert (await client.post(URL, json=BODY)).status_code == 403
        assert (await client.get(URL)).status_code == 403


async def test_only_the_admin_confirms_or_rejects(gateway: RunningGateway, sign_up: Any) -> None:
    seller = await sign_up(["seller"])
    async with gateway.client(seller["key"]) as client:
        payout = (await client.post(URL, json=BODY)).json()
        confirm_url = f"/v1/admin/payouts/{payout['id']}/confirm"
        refused = await client.post(confirm_url, json={"reference": "BANK-1"})
        assert refused.status_code == 403
        reject_url = f"/v1/admin/payouts/{payout['id']}/reject"
        assert (await client.post(reject_url, json={"reason": "no"})).status_code == 403
    async with gateway.client(ADMIN_KEY) as admin:
        missing = await admin.post("/v1/admin/payouts/01NOPE/confirm", json={"reference": "x"})
        assert missing.status_code == 404
        assert (await admin.post(confirm_url, json={})).status_code == 422
        confirmed = await admin.post(confirm_url, json={"reference": "BANK-1"})
        assert confirmed.status_code == 202, confirmed.text
        assert confirmed.json() == {"payout_id": payout["id"], "status": "confirm_requested"}
    sent = await commands(gateway, payout["id"])
    confirms = [(k, c) for k, c in sent if c["event_type"] == "payout.confirm_requested"]
    ((key, command),) = confirms
    assert key == seller["id"]
    assert (command["payload"]["seller_id"], command["payload"]["reference"]) == (
        seller["id"],
        "BANK-1",
    )
    paid = decided(payout, seller["id"], PayoutStatus.PAID)
    await publish_payloads(gateway.settings, BILLING_PAYOUTS, "billing", [(seller["id"], paid)])
    async with gateway.client(seller["key"]) as client:

        async def status() -> str:
            return str((await client.get(f"{URL}/{payout['id']}")).json()["status"])

        await eventually(status, lambda s: s == "paid")
    async with gateway.client(ADMIN_KEY) as admin:
        again = await admin.post(confirm_url, json={"reference": "BANK-2"})
    assert again.status_code == 409
