"""Wallets through the gateway and billing: dev and confirmed top-ups show in the balances."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

from gpux_billing.bootstrap import SPEC as BILLING
from gpux_devinfra.testing.http import account, auth
from gpux_devinfra.testing.services import running
from gpux_gateway.bootstrap import SPEC as GATEWAY
from gpux_platform.settings import GpuxSettings

ADMIN_KEY = "admin-key-for-tests-0123456789abcdef"


@pytest.fixture(scope="module")
async def client(module_settings: GpuxSettings) -> AsyncIterator[httpx.AsyncClient]:
    """A client of the gateway (with an admin key) and billing (dev top-ups) in this module."""
    async with (
        running(GATEWAY, module_settings, admin_key=SecretStr(ADMIN_KEY)) as (url, _),
        running(BILLING, module_settings, dev_topups=True),
        httpx.AsyncClient(base_url=url, timeout=30) as http,
    ):
        yield http


async def test_dev_topup_and_admin_confirmation_show_in_balances(
    client: httpx.AsyncClient,
) -> None:
    buyer = auth(await account(client, "buyer"))
    dev = await client.post(
        "/v1/topups",
        json={"amount": "12.50", "currency": "USD", "provider": "dev"},
        headers=buyer,
    )
    manual = await client.post(
        "/v1/topups", json={"amount": "7.5", "currency": "USD"}, headers=buyer
    )
    assert (dev.status_code, manual.status_code) == (202, 202)

    async def wait_for(expected: Any) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 30
        seen = (await client.get("/v1/accounts/me/balances", headers=buyer)).json()["items"]
        while seen != expected and loop.time() < deadline:
            await asyncio.sleep(0.2)
            seen = (await client.get("/v1/accounts/me/balances", headers=buyer)).json()["items"]
        assert seen == expected

    await wait_for([{"currency": "USD", "available": "12.50", "held": "0.00"}])
    topup_id = manual.json()["topup_id"]
    confirmed = await client.post(f"/v1/admin/topups/{topup_id}/confirm", headers=auth(ADMIN_KEY))
    assert confirmed.status_code == 202, confirmed.text
    await wait_for([{"currency": "USD", "available": "20.00", "held": "0.00"}])
