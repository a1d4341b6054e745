"""Setting a market up through the public API, as its users would: accounts, credit, offers.

Every call goes through the gateway's REST API. Setup calls that are refused with 429 or 503
wait for ``Retry-After`` and try again (a reused exchange may keep its default rate limits);
anything else that is not a success stops the run with the problem's text.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any

from pipeline_http import HttpClient, HttpError

from gpux_devinfra.testing.http import offer_body as api_offer_body

RETRY = frozenset({429, 503})
UNREACHABLE_S = 15.0
CURRENCY = "EUR"
REGION = "eu-west"
LIQUIDITY_PRICE = "0.50"
ORDER_CAP = "1.00"
MAX_OFFER_GPUS = 4096
BULK = 500
TOPUP = "100000.00"


class SetupError(RuntimeError):
    """The market could not be set up; the message says which call failed."""


def epoch(text: str) -> float:
    """An RFC 3339 timestamp as seconds since the epoch."""
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


class Api:
    """The benchmark's own calls (setup and checks), not the measured load."""

    def __init__(self, url: str, connections: int = 32) -> None:
        self.url = url
        self.http = HttpClient(url, max_connections=connections, timeout_s=60)

    async def close(self) -> None:
        """Close the connections."""
        await self.http.close()

    async def call(
        self,
        method: str,
        path: str,
        *,
        key: str = "",
        body: Any = None,
        idempotency_key: str = "",
        retry_for_s: float = 90.0,
    ) -> Any:
        """One call's JSON answer; 429/503 are retried after Retry-After, for a while."""
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        if idempotency_key:
            headers["Idempotency-Key"] = idempotency_key
        deadline = time.monotonic() + retry_for_s
        unreachable_since: float | None = None
        while True:
            try:
                response = await self.http.request(method, path, json_body=body, headers=headers)
            except HttpError as exc:
                # A gateway that does not answer for long has stopped: end the run soon.
                unreachable_since = unreachable_since or time.monotonic()
                if time.monotonic() - unreachable_since > UNREACHABLE_S:
                    raise SetupError(f"{method} {path}: {exc}") from None
                await asyncio.sleep(0.5)
                continue
            unreachable_since = None
            if response.status < 300:
                return response.json() if response.body else None
            if response.status in RETRY and time.monotonic() < deadline:
                await asyncio.sleep(min(5.0, float(response.headers.get("retry-after", "1"))))
                continue
            raise SetupError(f"{method} {path}: {response.status} {response.body[:300]!r}")

    async def pages(self, path: str, key: str, cursor: str | None = None) -> list[dict[str, Any]]:
        """Every item of a paginated list from ``cursor`` on."""
        items: list[dict[str, Any]] = []
        while True:
            query = f"?limit=100&cursor={cursor}" if cursor else "?limit=100"
            page = await self.call("GET", path + query, key=key)
            items += page["items"]
            cursor = page.get("next_cursor")
            if not cursor:
                return items


async def wait_catalog(api: Api, timeout_s: float = 120) -> None:
    """Until the gateway has read the catalog (GET /v1/gpus answers)."""
    await api.call("GET", "/v1/gpus", retry_for_s=timeout_s)


async def sign_up(api: Api, name: str, roles: list[str]) -> str:
    """A new account's API key."""
    made = await api.call("POST", "/v1/accounts", body={"name": name, "roles": roles})
    return str(made["api_key"])


async def sign_up_many(api: Api, prefix: str, role: str, count: int) -> list[str]:
    """``count`` new accounts with one role, a few at a time."""
    gate = asyncio.Semaphore(8)

    async def one(index: int) -> str:
        async with gate:
            return await sign_up(api, f"{prefix} {index}", [role])

    keys: list[str] = await asyncio.gather(*(one(i) for i in range(count)))
    return keys


async def fund(api: Api, keys: list[str], amount: str = TOPUP, timeout_s: float = 120) -> None:
    """A `dev` top-up for each buyer, then wait until every wallet shows it."""
    gate = asyncio.Semaphore(8)
    wanted = Decimal(amount)

    async def one(key: str) -> None:
        async with gate:
            body = {"amount": amount, "currency": CURRENCY, "provider": "dev"}
            await api.call("POST", "/v1/topups", key=key, body=body)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            async with gate:
                wallets = await api.call("GET", "/v1/accounts/me/balances", key=key)
            if any(
                w["currency"] == CURRENCY and Decimal(w["available"]) >= wanted
                for w in wallets["items"]
            ):
                return
            await asyncio.sleep(0.5)
        raise SetupError(
            f"a top-up was not booked in {timeout_s:.0f} s (billing needs GPUX_DEV_TOPUPS=true)"
        )

    await asyncio.gather(*(one(k) for k in keys))


def offer_body(gpu: str, gpus: int, price: str) -> dict[str, Any]:
    """An on-demand, hourly EUR offer in ``REGION``."""
    return api_offer_body(price, CURRENCY, gpus, gpu=gpu, region=REGION)


def order_body(gpu: str) -> dict[str, Any]:
    """A market order for one GPU for one hour, capped, immediate-or-cancel."""
    return {
        "gpu": gpu,
        "gpus": 1,
        "type": "market",
        "max_price_per_gpu_hour": ORDER_CAP,
        "currency": CURRENCY,
        "tier": "on_demand",
        "hours": 1,
        "time_in_force": "ioc",
    }


async def push_bulk(
    api: Api, key: str, bodies: list[dict[str, Any]], parallel: int = 4
) -> list[str]:
    """POST /v1/offers/bulk in requests of 500, a few at once; the offer ids in order."""
    gate = asyncio.Semaphore(parallel)
    chunks = [bodies[i : i + BULK] for i in range(0, len(bodies), BULK)]

    async def one(chunk: list[dict[str, Any]]) -> list[str]:
        async with gate:
            made = await api.call("POST", "/v1/offers/bulk", key=key, body={"offers": chunk})
        return [str(o["id"]) for o in made["items"]]

    ids: list[str] = []
    for part in await asyncio.gather(*(one(c) for c in chunks)):
        ids += part
    return ids


@dataclass
class OfferWatch:
    """When each of a seller's offers was first seen live (or refused) in GET /v1/offers."""

    key: str
    ids: set[str]
    live_at: dict[str, float] = field(default_factory=dict)
    refused: dict[str, str] = field(default_factory=dict)
    cursor: str | None = None

    @property
    def done(self) -> bool:
        """Every offer has left ``pending``."""
        return len(self.live_at) + len(self.refused) >= len(self.ids)

    async def poll(self, api: Api) -> None:
        """One pass over the seller's list, from the first page with a pending offer."""
        now = time.monotonic()
        items = await api.pages("/v1/offers", self.key, self.cursor)
        settled = True
        for item in items:
            offer_id = item["id"]
            if offer_id in self.ids and offer_id not in self.live_at:
                if item["status"] in ("live", "exhausted"):
                    self.live_at[offer_id] = now
                elif item["status"] == "rejected":
                    self.refused[offer_id] = str(item.get("reason"))
            pending = offer_id in self.ids and item["status"] in ("pending", "accepted")
            settled = settled and not pending
            if settled:
                self.cursor = offer_id  # the list is in id order: skip this page next time

    async def wait(self, api: Api, timeout_s: float) -> bool:
        """Poll until every offer is live (or refused); False if the time ran out."""
        deadline = time.monotonic() + timeout_s
        while not self.done:
            if time.monotonic() > deadline:
                return False
            await self.poll(api)
            if not self.done:
                await asyncio.sleep(0.25)
        return True


async def best_ask(api: Api, gpu: str) -> dict[str, Any] | None:
    """The on-demand best ask of ``gpu`` over every region, in EUR (None: nothing offered)."""
    quotes = await api.call("GET", f"/v1/prices/{gpu}?currency={CURRENCY}")
    for quote in quotes["items"]:
        if quote["tier"] == "on_demand" and quote["region"] == "*":
            best: dict[str, Any] | None = quote["best_ask"]
            return best
    return None


@dataclass
class Liquidity:
    """A seller who keeps enough GPUs on offer for the buyers' market orders."""

    key: str
    left: dict[str, int] = field(default_factory=dict)
    offers: int = 0

    async def ensure(self, api: Api, gpus: list[str], orders: int, timeout_s: float) -> None:
        """At least ``orders`` one-GPU orders' worth on each model's book (20 % spare)."""
        bodies: list[dict[str, Any]] = []
        per_gpu = orders // max(1, len(gpus)) + 1
        for gpu in gpus:
            missing = int(per_gpu * 1.2) + 10 - self.left.get(gpu, 0)
            while missing > 0:
                size = min(MAX_OFFER_GPUS, missing)
                bodies.append(offer_body(gpu, size, LIQUIDITY_PRICE))
                self.left[gpu] = self.left.get(gpu, 0) + size
                missing -= size
        if not bodies:
            return
        ids = await push_bulk(api, self.key, bodies)
        self.offers += len(ids)
        watch = OfferWatch(self.key, set(ids))
        if not await watch.wait(api, timeout_s) or watch.refused:
            raise SetupError(
                f"liquidity offers not live in {timeout_s:.0f} s"
                f" ({len(watch.live_at)}/{len(ids)} live, refused: {watch.refused})"
            )

    def take(self, gpus: list[str], orders: int) -> None:
        """Count ``orders`` one-GPU orders spread over ``gpus`` as taken."""
        for index, gpu in enumerate(gpus):
            self.left[gpu] -= orders // len(gpus) + (1 if index < orders % len(gpus) else 0)
