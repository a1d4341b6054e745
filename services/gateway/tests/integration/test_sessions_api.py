"""Browser sessions through the real HTTP API: signing in with an API key sets an HttpOnly,
SameSite cookie that stands for the key; writes with it need the CSRF token; sessions are
listed and revoked, and end with their key."""

from __future__ import annotations

from typing import Any

import httpx

SSH_KEYS = "/v1/accounts/me/ssh-keys"
ED25519 = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIMdu1jOKYPexG8kYae0ZiMB5LVxX3cDRLmcSF+N+NV9e"


def browser(gateway: Any) -> httpx.AsyncClient:
    """A client without an API key that keeps cookies, as a browser does."""
    return httpx.AsyncClient(base_url=gateway.url, timeout=30)


async def sign_in(client: httpx.AsyncClient, key: str) -> dict[str, Any]:
    made = await client.post("/v1/sessions", json={"api_key": key})
    assert made.status_code == 201, made.text
    return dict(made.json())


async def test_a_session_cookie_stands_for_its_key_and_writes_need_the_csrf_token(
    gateway: Any, sign_up: Any
) -> None:
    buyer = await sign_up(["buyer"])
    async with browser(gateway) as client:
        session = await sign_in(client, buyer["key"])
        cookies = {c.split("=", 1)[0]: c for c in (await _set_cookies(gateway, buyer["key"]))}
        me = await client.get("/v1/accounts/me")
        assert me.status_code == 200, me.text
        assert me.json()["id"] == buyer["id"] == session["account_id"]
        body = {"name": "laptop", "public_key": ED25519}
        refused = await client.post(SSH_KEYS, json=body)
        assert refused.status_code == 403
        assert refused.json()["type"].endswith("/csrf-failed")
        forged = await client.post(SSH_KEYS, json=body, headers={"X-CSRF-Token": "x" * 43})
        assert forged.status_code == 403
        token = client.cookies["gpux_csrf"]
        assert token == session["csrf_token"]
        made = await client.post(SSH_KEYS, json=body, headers={"X-CSRF-Token": token})
        assert made.status_code == 201, made.text
    session_cookie = cookies["gpux_session"].lower()
    assert "httponly" in session_cookie
    assert "samesite=strict" in session_cookie
    assert "path=/" in session_cookie
    assert "secure" not in session_cookie  # tests: plain http on loopback
    assert "httponly" not in cookies["gpux_csrf"].lower()


async def _set_cookies(gateway: Any, key: str) -> list[str]:
    async with browser(gateway) as client:
        made = await client.post("/v1/sessions", json={"api_key": key})
    return made.headers.get_list("set-cookie")


async def test_sessions_are_listed_revoked_and_end_with_their_key(
    gateway: Any, sign_up: Any
) -> None:
    buyer, other = await sign_up(["buyer"]), await sign_up(["seller"])
    async with browser(gateway) as first, browser(gateway) as second:
        one = await sign_in(first, buyer["key"])
        two = await sign_in(second, buyer["key"])
        listed = (await first.get("/v1/sessions")).json()["items"]
        assert [s["id"] for s in listed] == [two["id"], one["id"]]
        assert [s["current"] for s in listed] == [False, True]
        async with gateway.client(other["key"]) as stranger:
            assert (await stranger.delete(f"/v1/sessions/{one['id']}")).status_code == 404
        csrf = {"X-CSRF-Token": second.cookies["gpux_csrf"]}
        assert (await second.delete(f"/v1/sessions/{one['id']}", headers=csrf)).status_code == 204
        ended = await first.get("/v1/accounts/me")
        assert ended.status_code == 401
        assert "ended" in ended.json()["detail"]
        out = await second.delete("/v1/sessions/current", headers=csrf)
        assert out.status_code == 204
        assert "gpux_session" not in second.cookies
        assert (await second.get("/v1/accounts/me")).status_code == 401
        third = browser(gateway)
        async with third:
            await sign_in(third, buyer["key"])
            async with gateway.client(buyer["key"]) as api:
                revoked = await api.delete(f"/v1/accounts/me/keys/{buyer['key_id']}")
                assert revoked.status_code in (200, 204), revoked.text
            gone = await third.get("/v1/accounts/me")
            assert gone.status_code == 401


async def test_only_a_valid_api_key_opens_a_session(gateway: Any) -> None:
    async with browser(gateway) as client:
        bad = await client.post("/v1/sessions", json={"api_key": "gpx_nope"})
        assert bad.status_code == 401
        assert "gpux_session" not in client.cookies
    async with browser(gateway) as client:
        client.cookies.set("gpux_session", "gps_" + "a" * 16 + "_" + "b" * 43)
        forged = await client.get("/v1/accounts/me")
        assert forged.status_code == 401
        assert "unknown session" in forged.json()["detail"]
