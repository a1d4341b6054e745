"""Two gateway instances on one database: each answers keys from memory, and a key revoked or
an account suspended through one is refused by the other within a second (its event)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TypeVar

import httpx
import pytest
from pydantic import SecretStr

from gpux_devinfra.testing.http import account, auth
from gpux_devinfra.testing.services import running
from gpux_devinfra.testing.waiting import eventually
from gpux_gateway.bootstrap import SPEC as GATEWAY
from gpux_platform.settings import GpuxSettings

ADMIN_KEY = "admin-key-for-tests-0123456789abcdef"
WITHIN_S = 1.0
"""How soon a change made on one instance must be refused by the other."""

T = TypeVar("T")


@pytest.fixture(scope="module")
async def pair(
    module_settings: GpuxSettings,
) -> AsyncIterator[tuple[httpx.AsyncClient, httpx.AsyncClient]]:
    """Clients of two gateway instances (A and B) on this module's database and topics."""
    async with (
        running(GATEWAY, module_settings, admin_key=SecretStr(ADMIN_KEY)) as a,
        running(GATEWAY, module_settings, admin_key=SecretStr(ADMIN_KEY)) as b,
        a.client() as on_a,
        b.client() as on_b,
    ):
        yield on_a, on_b


async def within_a_second(
    probe: Callable[[], Awaitable[T]], check: Callable[[T], bool], what: str
) -> T:
    """What ``probe`` gives once ``check`` holds for it, which must be within ``WITHIN_S``."""
    return await eventually(probe, check, what=what, timeout_s=WITHIN_S, interval_s=0.02)


async def status_of(client: httpx.AsyncClient, key: str) -> int:
    """What ``GET /v1/accounts/me`` answers ``key`` with."""
    return (await client.get("/v1/accounts/me", headers=auth(key))).status_code


async def test_a_key_revoked_through_a_is_refused_by_b_within_a_second(
    pair: tuple[httpx.AsyncClient, httpx.AsyncClient],
) -> None:
    on_a, on_b = pair
    key = await account(on_a, "buyer")
    key_id = key.split("_", 2)[1]  # gpx_<key id>_<secret>
    assert await status_of(on_b, key) == 200  # B reads the key once, then holds it
    assert await status_of(on_b, key) == 200
    revoked = await on_a.delete(f"/v1/accounts/me/keys/{key_id}", headers=auth(key))
    assert revoked.status_code == 204, revoked.text
    await within_a_second(
        lambda: status_of(on_b, key),
        lambda status: status == 401,
        "B refusing the key revoked through A",
    )
    assert await status_of(on_a, key) == 401


async def test_an_account_suspended_through_a_is_refused_by_b_within_a_second(
    pair: tuple[httpx.AsyncClient, httpx.AsyncClient],
) -> None:
    on_a, on_b = pair
    key = await account(on_a, "seller")
    me = await on_b.get("/v1/accounts/me", headers=auth(key))
    assert me.status_code == 200
    suspended = await on_a.post(
        f"/v1/admin/accounts/{me.json()['id']}/suspend", headers=auth(ADMIN_KEY)
    )
    assert suspended.status_code == 200, suspended.text
    refused = await within_a_second(
        lambda: on_b.get("/v1/accounts/me", headers=auth(key)),
        lambda response: response.status_code == 403,
        "B refusing the account suspended through A",
    )
    assert refused.json()["type"].endswith("/account-suspended")
    reactivated = await on_a.post(
        f"/v1/admin/accounts/{me.json()['id']}/reactivate", headers=auth(ADMIN_KEY)
    )
    assert reactivated.status_code == 200
    await within_a_second(
        lambda: status_of(on_b, key),
        lambda status: status == 200,
        "B taking the reactivated account back",
    )
