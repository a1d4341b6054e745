"""The demo data set through the real chain: gateway, catalog, pricing, matching, billing.

The loader (a synchronous client, run in a worker thread beside the in-process services)
signs the demo people up, pushes every offer and funds the buyer; best asks appear for
several GPU models in both tiers; a second run reuses the keys file and changes nothing, and
so does one whose file kept only its secret; a sign-up under a guessable key gets no demo
account.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from gpux_billing.bootstrap import SPEC as BILLING
from gpux_catalog.bootstrap import SPEC as CATALOG
from gpux_devinfra.demo.board import Board, quotes_from_prices
from gpux_devinfra.demo.dataset import BUYER, SELLERS
from gpux_devinfra.demo.loader import DemoAccount, load_demo
from gpux_devinfra.testing.http import auth, get_until
from gpux_devinfra.testing.services import Running, stack
from gpux_gateway.bootstrap import SPEC as GATEWAY
from gpux_matching.bootstrap import SPEC as MATCHING
from gpux_platform.settings import GpuxSettings
from gpux_pricing.bootstrap import SPEC as PRICING
from gpux_sdk.models.price_out import PriceOut


@pytest.fixture(scope="module")
async def gateway(module_settings: GpuxSettings) -> AsyncIterator[Running]:
    """The services with their own defaults (rate limits included), billing with dev top-ups
    (the demo buyer's credit); the gateway."""
    services = (CATALOG, PRICING, MATCHING, BILLING, GATEWAY)
    async with stack(module_settings, *services, overrides={"billing": {"dev_topups": True}}) as up:
        yield up["gateway"]


def _books(items: list[dict[str, Any]]) -> set[tuple[str, str]]:
    return {(i["gpu"], i["tier"]) for i in items if i["region"] == "*" and i["best_ask"]}


async def test_the_demo_loads_once_and_shows_live_best_asks(
    gateway: Running, tmp_path: Path
) -> None:
    keys_file = tmp_path / "demo-keys.json"
    first = await asyncio.to_thread(load_demo, gateway.url, keys_file=keys_file, timeout_s=120)

    offered = sum(len(s.offers) for s in SELLERS)
    assert first.offers_pushed == offered
    assert first.offers_live == offered
    assert sorted(first.topups) == sorted(f"{a} {c}" for c, a in BUYER.credit)
    stored = json.loads(keys_file.read_text())
    assert {a["handle"] for a in stored["accounts"]} == {"buyer", *(s.handle for s in SELLERS)}
    assert keys_file.stat().st_mode & 0o077 == 0

    expected = {(o.gpu, tier) for s in SELLERS for o in s.offers for tier in o.tiers()}
    async with gateway.client() as client:
        prices = await get_until(
            client, "/v1/prices?currency=EUR", lambda b: _books(b["items"]) >= expected
        )
        assert _books(prices["items"]) >= expected
        assert {tier for _, tier in expected} == {"on_demand", "interruptible"}
        buyer = first.buyer.api_key
        wallet = await client.get("/v1/accounts/me/balances", headers=auth(buyer))
        balances = wallet.json()["items"]
        assert {b["currency"]: Decimal(b["available"]) for b in balances} == {
            c: Decimal(a) for c, a in BUYER.credit
        }

        # The board built from the three currencies' snapshots lists every demo book.
        by_currency = {
            c: [
                PriceOut.from_dict(item)
                for item in (await client.get("/v1/prices", params={"currency": c})).json()["items"]
            ]
            for c in ("EUR", "USD", "GBP")
        }
    board = Board.for_catalog(first.gpus)
    for quote in quotes_from_prices(by_currency):
        board.apply(quote)
    rows = board.rows()
    assert {(q.gpu, q.tier) for q in rows} == expected
    assert all(set(q.prices) == {"EUR", "USD", "GBP"} for q in rows)

    # Again, against the same database: same accounts, nothing pushed, no second credit.
    second = await asyncio.to_thread(load_demo, gateway.url, keys_file=keys_file, timeout_s=120)
    assert second.accounts == first.accounts
    assert (second.offers_pushed, second.topups, second.offers_live) == (0, [], offered)

    # The file's accounts lost but its secret kept (a load cut short after its sign-ups): the
    # sign-ups replay under their Idempotency-Keys, derived from the secret: same accounts.
    kept = json.loads(keys_file.read_text())
    keys_file.write_text(json.dumps({**kept, "accounts": []}))
    third = await asyncio.to_thread(load_demo, gateway.url, keys_file=keys_file, timeout_s=120)
    assert [a.account_id for a in third.accounts] == [a.account_id for a in first.accounts]
    assert (third.offers_pushed, third.topups) == (0, [])
    async with gateway.client(buyer) as client:
        again = (await client.get("/v1/accounts/me/balances")).json()["items"]
    assert again == balances
    await _a_guessed_sign_up_gets_no_demo_account(gateway, first.buyer)


async def _a_guessed_sign_up_gets_no_demo_account(gateway: Running, buyer: DemoAccount) -> None:
    """Anyone sending the demo buyer's sign-up under the key an older loader used (its handle)
    gets an account of its own, not the demo buyer's key."""
    async with gateway.client() as client:
        body = {"name": BUYER.name, "roles": ["buyer"]}
        guessed = {"Idempotency-Key": f"gpux-demo-account-{BUYER.handle}"}
        answer = await client.post("/v1/accounts", json=body, headers=guessed)
    assert answer.status_code == 201, answer.text
    assert answer.json()["account"]["id"] != buyer.account_id
    assert answer.json()["api_key"] != buyer.api_key
