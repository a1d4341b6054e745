"""The exchange's public API as the browser tests' sellers and buyers use it (httpx)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

import httpx

from gpux_devinfra.testing.account_api import AccountApi


class Api(AccountApi):
    """One account of the exchange (or none: anonymous reads)."""

    @classmethod
    async def sign_up(cls, url: str, name: str, roles: list[str]) -> Api:
        """A new account with these roles, using the key it was given."""
        async with httpx.AsyncClient(base_url=url, timeout=10) as anonymous:
            created = await anonymous.post("/v1/accounts", json={"name": name, "roles": roles})
        assert created.status_code == 201, created.text
        return cls(url, created.json()["api_key"])

    @classmethod
    async def seller_with(cls, url: str, name: str, prices: Mapping[str, str]) -> Api:
        """A new seller whose on-demand offers (``offer``) at ``prices`` (USD per GPU-hour by
        GPU) are the best asks of their books."""
        account = await cls.sign_up(url, name, ["seller"])
        await asyncio.gather(*(account.offer(gpu, price) for gpu, price in prices.items()))
        await asyncio.gather(
            *(account.best_ask(gpu, "on_demand", price) for gpu, price in prices.items())
        )
        return account

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
