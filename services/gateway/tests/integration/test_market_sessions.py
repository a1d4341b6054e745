"""Market sessions through the gateway: the admin opens and halts, anyone reads the state."""

from __future__ import annotations

import asyncio
from typing import Any

from gpux_contracts.ids import new_id

from .conftest import ADMIN_KEY


async def _market_until(gateway: Any, check: Any, timeout_s: float = 20) -> dict[str, Any]:
    """``GET /v1/market`` until ``check`` holds for its body (or the time is up)."""
    deadline = asyncio.get_running_loop().time() + timeout_s
    async with gateway.client() as client:
        while True:
            response = await client.get("/v1/market")
            if response.status_code == 200:
                body: dict[str, Any] = response.json()
                if check(body) or asyncio.get_running_loop().time() > deadline:
                    return body
            elif asyncio.get_running_loop().time() > deadline:
                raise AssertionError(response.text)
            await asyncio.sleep(0.2)


async def test_only_the_admin_changes_the_market_state(gateway: Any, sign_up: Any) -> None:
    account = await sign_up(["buyer", "seller"])
    body = {"scope": "all", "state": "halted", "reason": "maintenance"}
    async with gateway.client(account["key"]) as client:
        refused = await client.post("/v1/admin/market", json=body)
    assert refused.status_code == 403, refused.text
    async with gateway.client() as anonymous:
        unauthenticated = await anonymous.post("/v1/admin/market", json=body)
    assert unauthenticated.status_code == 401, unauthenticated.text
    async with gateway.client(ADMIN_KEY) as admin:
        for bad in (
            {"scope": "all", "state": "closed"},
            {"scope": "RTX 4090", "state": "halted"},
            {"scope": "all", "state": "open", "extra": 1},
        ):
            response = await admin.post("/v1/admin/market", json=bad)
            assert response.status_code == 422, response.text


async def test_halts_and_reopens_show_at_get_market(gateway: Any) -> None:
    gpu = f"gpu-{new_id().lower()[-8:]}"
    before = await _market_until(gateway, lambda b: True)
    assert before["gpus"].get(gpu) is None  # nothing published: open, as `all` says

    async with gateway.client(ADMIN_KEY) as admin:
        halted = await admin.post(
            "/v1/admin/market", json={"scope": gpu, "state": "halted", "reason": "maintenance"}
        )
        assert halted.status_code == 202, halted.text
        assert halted.json()["scope"] == gpu
        assert halted.json()["state"] == "halted"
        body = await _market_until(gateway, lambda b: b["gpus"].get(gpu) == "halted")
        assert body["gpus"][gpu] == "halted"

        everything = await admin.post("/v1/admin/market", json={"scope": "all", "state": "halted"})
        assert everything.status_code == 202, everything.text
        body = await _market_until(gateway, lambda b: b["all"] == "halted")
        assert body["all"] == "halted"

        # Reopen both, so the rest of the session trades as before.
        for scope in ("all", gpu):
            reopened = await admin.post("/v1/admin/market", json={"scope": scope, "state": "open"})
            assert reopened.status_code == 202, reopened.text
        body = await _market_until(
            gateway, lambda b: b["all"] == "open" and b["gpus"].get(gpu) == "open"
        )
        assert body["all"] == "open"
        assert body["gpus"][gpu] == "open"
