"""Wait for an eventually-consistent read model through the public API."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import httpx


async def eventually(
    client: httpx.AsyncClient,
    path: str,
    check: Callable[[Any], bool],
    *,
    timeout_s: float = 30,
    key: str = "",
) -> Any:
    """GET ``path`` every 0.2 s until ``check(body)`` holds; returns the last body either way."""
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    deadline = asyncio.get_running_loop().time() + timeout_s
    while True:
        body = (await client.get(path, headers=headers)).json()
        if check(body) or asyncio.get_running_loop().time() > deadline:
            return body
        await asyncio.sleep(0.2)


async def account(client: httpx.AsyncClient, role: str) -> str:
    """Sign up an account named after its one role through the API; its API key."""
    created = await client.post("/v1/accounts", json={"name": role, "roles": [role]})
    assert created.status_code == 201, created.text
    return str(created.json()["api_key"])


def auth(key: str) -> dict[str, str]:
    """The header that authenticates a request with ``key``."""
    return {"Authorization": f"Bearer {key}"}
