"""One account's view of a running exchange's public API, over httpx, for the suites that
drive it as its clients do (the end-to-end story, the browser tests' sellers and buyers): JSON
answers that must be 2xx, and a path read until it shows what a test waits for."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx

from gpux_devinfra.testing.waiting import eventually


class AccountApi:
    """One account of the exchange (or none: anonymous reads)."""

    until_timeout_s: float = 30
    """How long ``until`` waits unless told."""
    until_interval_s: float = 0.2
    """How often ``until`` reads again."""

    def __init__(self, url: str, api_key: str | None = None) -> None:
        headers = {} if api_key is None else {"Authorization": f"Bearer {api_key}"}
        self.client = httpx.AsyncClient(base_url=url, headers=headers, timeout=10)
        self.api_key = api_key

    async def call(self, method: str, path: str, **kwargs: Any) -> Any:
        """The JSON answer; anything but a 2xx fails the test."""
        response = await self.client.request(method, path, **kwargs)
        assert response.status_code < 300, f"{method} {path}: {response.text}"
        return response.json()

    async def until(
        self, path: str, check: Callable[[Any], object], timeout_s: float | None = None
    ) -> Any:
        """``GET path`` until ``check`` holds for its body; that body."""
        return await eventually(
            lambda: self.call("GET", path),
            check,
            what=f"GET {path}",
            timeout_s=self.until_timeout_s if timeout_s is None else timeout_s,
            interval_s=self.until_interval_s,
        )

    async def close(self) -> None:
        """Close the connection pool."""
        await self.client.aclose()
