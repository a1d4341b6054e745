"""Accounts, keys, tenancy, roles and key secrecy through the real HTTP API."""

from __future__ import annotations

import logging
from typing import Any

import asyncpg
import pytest

ADMIN_KEY = "admin-key-for-tests-0123456789abcdef"


async def test_sign_up_gives_a_working_key(gateway: Any, sign_up: Any) -> None:
    account = await sign_up(["buyer"])
    async with gateway.client(account["key"]) as client:
        me = await client.get("/v1/accounts/me")
    assert me.status_code == 200
    assert me.json()["id"] == account["id"]
    assert me.json()["roles"] == ["buyer"]
    assert me.json()["status"] == "active"


@pytest.mark.parametrize(
    "header",
    [None, "Bearer nonsense", "Basic dXNlcjpwYXNz", "Bearer gpx_aaaaaaaaaaaaaaaa_" + "A" * 43],
)
async def test_anything_but_a_valid_key_is_401(gateway: Any, header: str | None) -> None:
    async with gateway.client() as client:
        headers = {"Authorization": header} if header else {}
        response = await client.get("/v1/accounts/me", headers=headers)
    assert response.status_code == 401
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json()["type"].endswith("/unauthorized")


async def test_revoked_key_is_401(gateway: Any, sign_up: Any) -> None:
    account = await sign_up(["seller"])
    async with gateway.client(account["key"]) as client:
        second = await client.post("/v1/accounts/me/keys", json={"name": "ci"})
        assert second.status_code == 201
        new_key = second.json()["api_key"]
        revoked = await client.delete(f"/v1/accounts/me/keys/{account['key_id']}")
        assert revoked.status_code == 204
        assert (await client.get("/v1/accounts/me")).status_code == 401
    async with gateway.client(new_key) as client:
        listed = (await client.get("/v1/accounts/me/keys")).json()
    keys = {k["id"]: k for k in listed["items"]}
    assert keys[account["key_id"]]["revoked_at"] is not None
    assert keys[second.json()["key"]["id"]]["revoked_at"] is None


async def test_another_accounts_key_is_404_not_403(gateway: Any, sign_up: Any) -> None:
    alice = await sign_up(["buyer"])
    bob = await sign_up(["buyer"])
    async with gateway.client(alice["key"]) as client:
        response = await client.delete(f"/v1/accounts/me/keys/{bob['key_id']}")
    assert response.status_code == 404
    async with gateway.client(bob["key"]) as client:
        assert (await client.get("/v1/accounts/me")).status_code == 200


async def test_buyer_key_on_seller_endpoint_is_403(
    gateway: Any, sign_up: Any, offer_body: dict[str, Any]
) -> None:
    buyer = await sign_up(["buyer"])
    async with gateway.client(buyer["key"]) as client:
        response = await client.post("/v1/offers", json=offer_body)
    assert response.status_code == 403
    assert response.json()["type"].endswith("/role-required")


async def test_scopes_are_limited_by_roles(gateway: Any, sign_up: Any) -> None:
    buyer = await sign_up(["buyer"])
    async with gateway.client(buyer["key"]) as client:
        refused = await client.post("/v1/accounts/me/keys", json={"scopes": ["offers:write"]})
        assert refused.status_code == 403
        read_only = await client.post("/v1/accounts/me/keys", json={"scopes": ["read"]})
        assert read_only.status_code == 201
    async with gateway.client(read_only.json()["api_key"]) as client:
        assert (await client.get("/v1/accounts/me")).status_code == 200
        cannot = await client.post("/v1/accounts/me/keys", json={})
        assert cannot.status_code == 403
        assert cannot.json()["type"].endswith("/scope-required")


async def test_admin_suspends_and_suspended_account_is_refused(gateway: Any, sign_up: Any) -> None:
    seller = await sign_up(["seller"])
    async with gateway.client(seller["key"]) as client:
        assert (await client.post(f"/v1/admin/accounts/{seller['id']}/suspend")).status_code == 403
    async with gateway.client(ADMIN_KEY) as admin:
        suspended = await admin.post(f"/v1/admin/accounts/{seller['id']}/suspend")
        assert suspended.json()["status"] == "suspended"
        missing = await admin.post("/v1/admin/accounts/nobody/suspend")
        assert missing.status_code == 404
    async with gateway.client(seller["key"]) as client:
        refused = await client.get("/v1/accounts/me")
        assert refused.status_code == 403
        assert refused.json()["type"].endswith("/account-suspended")
    async with gateway.client(ADMIN_KEY) as admin:
        await admin.post(f"/v1/admin/accounts/{seller['id']}/reactivate")
    async with gateway.client(seller["key"]) as client:
        assert (await client.get("/v1/accounts/me")).status_code == 200


async def test_key_material_never_appears_after_creation(
    gateway: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    async with gateway.client() as client:
        created = await client.post(
            "/v1/accounts", json={"name": "secretive", "roles": ["buyer", "seller"]}
        )
    key = created.json()["api_key"]
    secret = key.split("_", 2)[2]  # gpx_<id>_<secret>: the secret may hold "_" itself
    async with gateway.client(key) as client:
        another = await client.post("/v1/accounts/me/keys", json={"name": "second"})
        second_secret = another.json()["api_key"].split("_", 2)[2]
        listing = await client.get("/v1/accounts/me/keys")
        me = await client.get("/v1/accounts/me")
    for response in (listing, me):
        assert secret not in response.text
        assert second_secret not in response.text
    assert secret not in caplog.text
    assert second_secret not in caplog.text
    conn = await asyncpg.connect(gateway.settings.database_url.get_secret_value())
    try:
        for table in ("api_keys", "idempotency", "outbox", "accounts"):
            dump = await conn.fetchval(
                f"SELECT coalesce(string_agg(t::text, ''), '') FROM gateway.{table} t"
            )
            assert secret not in dump
            assert second_secret not in dump
    finally:
        await conn.close()
