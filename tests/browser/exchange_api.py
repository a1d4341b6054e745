"""The exchange's public API as the browser tests' sellers and buyers use it (httpx)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx

from gpux_devinfra.testing.waiting import eventually


class Api:
    """One account of the exchange (or none: anonymous reads)."""

    def __init__(self, url: str, api_key: str | None = None) -> None:
        headers = {} if api_key is None else {"Authorization": f"Bearer {api_key}"}
        self.client = httpx.AsyncClient(base_url=url, headers=headers, timeout=10)

    @classmethod
    async def sign_up(cls, url: str, name: str, roles: list[str]) -> Api:
        """A new account with these roles, using the key it was given."""
        async with httpx.AsyncClient(base_url=url, timeout=10) as anonymous:
            created = await anonymous.post("/v1/accounts", json={"name": name, "roles": roles})
        assert created.status_code == 201, created.text
        return cls(url, created.json()["api_key"])

    async def call(self, method: str, path: str, **kwargs: Any) -> Any:
        """The JSON answer; anything but a 2xx fails the test."""
        response = await self.client.request(method, path, **kwargs)
        assert response.status_code < 300, f"{method} {path}: {response.text}"
        return response.json()

    async def until(self, path: str, check: Callable[[Any], object], timeout_s: float = 30) -> Any:
        """``GET path`` until ``check`` holds for its body; that body."""
        return await eventually(
            lambda: self.call("GET", path),
            check,
            what=f"GET {path}",
            timeout_s=timeout_s,
            interval_s=0.2,
        )

    async def offer(self, gpu: str, price: str, *, gpus: int = 4, tier: str = "on_demand") -> str:
        """Push an offer in USD, billed per hour; its id once the book holds it."""
        body = {
            "gpu": gpu,
            "gpus": gpus,
            "price_per_gpu_hour": price,
            "currency": "USD",
            "tier": tier,
            "billing": "hour",
            "provisioning_timeout_seconds": 0,  # ready at the start: charged from the trade
        }
        offer_id: str = (await self.call("POST", "/v1/offers", json=body))["id"]
        await self.until(f"/v1/offers/{offer_id}", lambda o: o["status"] in ("live", "exhausted"))
        return offer_id

    async def best_ask(self, gpu: str, tier: str, price: str) -> None:
        """Until the market data shows ``price`` (USD) as the best ask of the book."""

        def shows(body: Any) -> bool:
            return any(
                item["tier"] == tier
                and item["region"] == "*"
                and (item["best_ask"] or {}).get("price") == price
                for item in body["items"]
            )

        await self.until(f"/v1/prices/{gpu}?currency=USD", shows)

    async def close(self) -> None:
        """Close the connection pool."""
        await self.client.aclose()
