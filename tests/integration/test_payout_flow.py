"""A seller's payout through the real chain (catalog, pricing, matching, billing, gateway), public
API only, with billing's ledger audited at the end.

A buyer leases 4 GPUs of a seller's hourly offer at 10.00 EUR per GPU-hour: the first hour is
charged at once, 40.00 EUR, of which the seller's payable gets 36.00 (the 10 % fee aside). The
seller asks for 30.00: billing moves it to the seller's payouts in transit (pending), the admin
confirms the bank transfer, and billing books it paid. The seller's statement shows both
transfers, its payable is 6.00 and billing's ledger balances. A second request for more than
is left is rejected with nothing moved; one below the minimum is a 422 at the gateway.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

from gpux_billing.adapters.postgres.ledger import PostgresLedger
from gpux_billing.bootstrap import SPEC as BILLING
from gpux_catalog.bootstrap import SPEC as CATALOG
from gpux_devinfra.testing.database import migrated_pool
from gpux_devinfra.testing.http import auth, leased_for_an_hour
from gpux_devinfra.testing.http import get_until as until
from gpux_devinfra.testing.services import IN_TESTS, stack
from gpux_gateway.bootstrap import SPEC as GATEWAY
from gpux_matching.bootstrap import SPEC as MATCHING
from gpux_platform.settings import GpuxSettings
from gpux_pricing.bootstrap import SPEC as PRICING

ADMIN_KEY = "admin-key-for-tests-0123456789abcdef"
GPU = "rtx-4090"


@dataclass
class Exchange:
    client: httpx.AsyncClient
    billing: GpuxSettings


@pytest.fixture(scope="module")
async def exchange(module_settings: GpuxSettings) -> AsyncIterator[Exchange]:
    """The whole chain in-process (the gateway with an admin key); a client of the gateway."""
    overrides = {
        **IN_TESTS,
        "gateway": {**IN_TESTS["gateway"], "admin_key": SecretStr(ADMIN_KEY)},
    }
    async with (
        stack(
            module_settings, CATALOG, PRICING, MATCHING, BILLING, GATEWAY, overrides=overrides
        ) as s,
        s["gateway"].client() as client,
    ):
        yield Exchange(client, s["billing"].settings)


def payable(lines: list[dict[str, Any]]) -> Decimal:
    """The seller_payable balance a statement's lines add up to."""
    return sum(
        (Decimal(line["amount"]) for line in lines if line["account_kind"] == "seller_payable"),
        Decimal(0),
    )


async def statement(client: httpx.AsyncClient, key: str) -> list[dict[str, Any]]:
    body = (await client.get("/v1/ledger?currency=EUR&limit=100", headers=auth(key))).json()
    lines: list[dict[str, Any]] = body["items"]
    return lines


async def seller_with_earnings(client: httpx.AsyncClient) -> str:
    """A seller whose offer a buyer leased for an hour (charged at once): 36.00 EUR payable."""
    seller, _, _ = await leased_for_an_hour(client, GPU, 4, "10.00", "100")
    await until(
        client,
        "/v1/accounts/me/earnings",
        lambda b: [(e["currency"], e["net"]) for e in b["items"]] == [("EUR", "36.00")],
        key=seller,
    )
    lines = await until(
        client, "/v1/ledger?currency=EUR", lambda b: payable(b["items"]) == 36, key=seller
    )
    assert lines
    return seller


async def payout_becomes(
    client: httpx.AsyncClient, key: str, payout_id: str, status: str
) -> dict[str, Any]:
    found: dict[str, Any] = await until(
        client, f"/v1/payouts/{payout_id}", lambda p: p["status"] == status, key=key
    )
    return found


async def test_a_seller_is_paid_out_and_the_ledger_stays_balanced(exchange: Exchange) -> None:
    client = exchange.client
    seller = await seller_with_earnings(client)
    body = {"currency": "EUR", "amount": "30.00", "destination": "IBAN DE89 3704 0044 0532"}
    made = await client.post("/v1/payouts", json=body, headers=auth(seller))
    assert made.status_code == 202, made.text
    payout_id = made.json()["id"]
    pending = await payout_becomes(client, seller, payout_id, "pending")
    assert pending["reference"] == "manual"

    confirmed = await client.post(
        f"/v1/admin/payouts/{payout_id}/confirm",
        json={"reference": "BANK-2026-0001"},
        headers=auth(ADMIN_KEY),
    )
    assert confirmed.status_code == 202, confirmed.text
    paid = await payout_becomes(client, seller, payout_id, "paid")
    assert (paid["amount"], paid["reference"]) == ("30.00", "BANK-2026-0001")

    def on_statement(body: dict[str, Any]) -> bool:
        kinds = [line["kind"] for line in body["items"]]
        return "payout" in kinds and "payout_paid" in kinds

    shown = await until(client, "/v1/ledger?currency=EUR", on_statement, key=seller)
    lines = shown["items"]
    moves = sorted(
        (line["kind"], line["account_kind"], line["amount"])
        for line in lines
        if line["transfer_id"] in (f"payout:{payout_id}", f"payout-paid:{payout_id}")
    )
    assert moves == [
        ("payout", "payouts_in_transit", "30.00"),
        ("payout", "seller_payable", "-30.00"),
        ("payout_paid", "payouts_in_transit", "-30.00"),
    ]
    assert payable(await statement(client, seller)) == Decimal("6.00")  # 36.00 - 30.00

    # More than is left is rejected by billing, nothing moved; below the minimum is a 422.
    more = {**body, "amount": "10.00"}
    refused = await client.post("/v1/payouts", json=more, headers=auth(seller))
    assert refused.status_code == 202, refused.text
    rejected = await payout_becomes(client, seller, refused.json()["id"], "rejected")
    assert rejected["reason"] == "insufficient_seller_payable"
    small = await client.post("/v1/payouts", json={**body, "amount": "5.00"}, headers=auth(seller))
    assert small.status_code == 422
    assert payable(await statement(client, seller)) == Decimal("6.00")

    async with migrated_pool(exchange.billing, max_size=1) as pool, pool.acquire() as conn:
        audit = await PostgresLedger(conn).verify()
    assert audit.ok, audit
