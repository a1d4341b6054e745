"""Steady order and offer load through the public REST API, as real clients make it.

A few buyers place orders at a fixed rate (market and limit, immediate-or-cancel, good till a
date a few seconds ahead, or good till cancelled and cancelled a moment later) and a few
sellers re-price their offers and add new ones. A client retries a request that found no
gateway, or a 429/5xx, with the same ``Idempotency-Key`` for a bounded while, as a real client
would; what it was finally told is counted by answer. A cancel that never got an answer (the
gateway down longer than that) is sent again once the load ends. Every order and offer
answered 202 is kept: the invariants are checked on those.
"""

from __future__ import annotations

import asyncio
import functools
import random
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import httpx

from gpux_contracts.ids import new_id
from gpux_devinfra.testing.http import offer_body as api_offer_body

TRADED = ("h100-sxm", "l40s")
"""The books the load trades on and re-prices."""
QUIET = "a100-sxm-80gb"
"""A book given offers before the faults and left alone: it must still be right after them,
although nothing changes it again (no later change rewrites what a fault lost)."""
GPUS = (*TRADED, QUIET)
CURRENCY = "EUR"
TIER = "on_demand"
TOPUP = "100000.00"
RETRY_FOR_S = 20.0
FINAL_ORDER = frozenset({"filled", "cancelled", "expired", "rejected"})


class SetupError(RuntimeError):
    """The market could not be set up before the faults (nothing was injected yet)."""


@dataclass
class Client:
    """One HTTP client of the gateway, and every answer it got, counted."""

    url: str
    answers: Counter[str] = field(default_factory=Counter)
    refusals: dict[str, str] = field(default_factory=dict)
    """The first problem of each kind of 4xx answer (its detail), for the report."""

    def __post_init__(self) -> None:
        self.http = httpx.AsyncClient(base_url=self.url, timeout=10)

    async def close(self) -> None:
        """Close the connections."""
        await self.http.aclose()

    async def send(
        self, method: str, path: str, key: str = "", body: Any = None
    ) -> httpx.Response | None:
        """One request, retried (same Idempotency-Key) while no gateway answers or it answers
        429/5xx, for up to ``RETRY_FOR_S``; the last answer (None: never reached)."""
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        if method != "GET":
            headers["Idempotency-Key"] = new_id()
        deadline = time.monotonic() + RETRY_FOR_S
        while True:
            try:
                response = await self.http.request(method, path, json=body, headers=headers)
            except httpx.HTTPError:
                response = None
            if response is not None and response.status_code < 500 and response.status_code != 429:
                label = f"{method} {path.split('/')[2]} {response.status_code}"
                self.answers[label] += 1
                if response.status_code >= 400:
                    self.refusals.setdefault(label, response.text[:300])
                return response
            if time.monotonic() > deadline:
                self.answers[f"{method} {path.split('/')[2]} gave up"] += 1
                return response
            await asyncio.sleep(0.5)

    async def ok(self, method: str, path: str, key: str = "", body: Any = None) -> Any:
        """A setup call's JSON answer; anything but a success stops the run."""
        response = await self.send(method, path, key, body)
        if response is None or response.status_code >= 300:
            text = "no answer" if response is None else f"{response.status_code} {response.text}"
            raise SetupError(f"{method} {path}: {text}")
        return response.json() if response.content else None


async def until(check: Callable[[], Awaitable[bool]], what: str, timeout_s: float) -> None:
    """Poll ``check`` until it holds; SetupError after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while not await check():
        if time.monotonic() > deadline:
            raise SetupError(f"not within {timeout_s:.0f} s: {what}")
        await asyncio.sleep(0.25)


def offer_body(gpu: str, gpus: int, price: str) -> dict[str, Any]:
    """An on-demand, hourly EUR offer in eu-west."""
    return api_offer_body(price, CURRENCY, gpus, gpu=gpu, region="eu-west")


def price(rng: random.Random, low: str, high: str) -> str:
    """A price between ``low`` and ``high`` (cents)."""
    cents = rng.randint(int(Decimal(low) * 100), int(Decimal(high) * 100))
    return f"{cents / 100:.2f}"


@dataclass
class Market:
    """The accounts of the run and every order and offer the gateway accepted (202)."""

    client: Client
    buyers: list[str]
    """The buyers' keys; the last is quiet: funded before the faults, it never orders, so no
    later change rewrites what a fault lost of its wallet's view."""
    sellers: list[str]
    orders: dict[str, str] = field(default_factory=dict)
    """Order id -> the buyer's key."""
    offers: dict[str, str] = field(default_factory=dict)
    """Offer id -> the seller's key."""
    quiet: dict[str, str] = field(default_factory=dict)
    """The offers on the quiet book (also in ``offers``); the load never changes them."""
    reprices: int = 0
    uncancelled: list[tuple[str, str]] = field(default_factory=list)
    """Orders (id, buyer's key) whose cancel found no gateway for the whole retry window (it
    was down longer): sent again once the load ends, as a client would later."""

    async def cancel(self, order_id: str, key: str) -> None:
        """DELETE /v1/orders/{id}; kept in ``uncancelled`` when it never got an answer."""
        response = await self.client.send("DELETE", f"/v1/orders/{order_id}", key)
        if response is None or response.status_code >= 500 or response.status_code == 429:
            self.uncancelled.append((order_id, key))

    async def cancel_again(self) -> int:
        """Send the cancels that never got an answer again (once each); how many there were."""
        again, self.uncancelled = self.uncancelled, []
        await asyncio.gather(*(self.cancel(order_id, key) for order_id, key in again))
        return len(again)

    async def place(self, key: str, body: dict[str, Any]) -> str | None:
        """POST /v1/orders; the order's id when accepted."""
        return await self._create("/v1/orders", key, body, self.orders)

    async def offer(self, key: str, body: dict[str, Any]) -> str | None:
        """POST /v1/offers; the offer's id when accepted."""
        return await self._create("/v1/offers", key, body, self.offers)

    async def _create(
        self, path: str, key: str, body: dict[str, Any], accepted: dict[str, str]
    ) -> str | None:
        response = await self.client.send("POST", path, key, body)
        if response is None or response.status_code != 202:
            return None
        made = str(response.json()["id"])
        accepted[made] = key
        return made


async def open_market(client: Client, buyers: int, sellers: int, rng: random.Random) -> Market:
    """Funded buyers (``buyers`` who order, and a quiet one) and sellers whose first offers
    are live on every book."""
    await until(lambda: _catalog_has(client), "the gateway knows the GPUs", 120)

    async def sign_up(name: str, role: str) -> str:
        made = await client.ok("POST", "/v1/accounts", body={"name": name, "roles": [role]})
        return str(made["api_key"])

    market = Market(
        client,
        [await sign_up(f"chaos buyer {i}", "buyer") for i in range(buyers + 1)],
        [await sign_up(f"chaos seller {i}", "seller") for i in range(sellers)],
    )
    for key in market.buyers:
        body = {"amount": TOPUP, "currency": CURRENCY, "provider": "dev"}
        await client.ok("POST", "/v1/topups", key, body)
        await until(functools.partial(_funded, client, key), "a buyer's top-up is booked", 60)
    for key in market.sellers:
        for gpu in TRADED:
            for _ in range(3):
                await market.offer(key, offer_body(gpu, 400, price(rng, "0.50", "0.80")))
        quiet = await market.offer(key, offer_body(QUIET, 8, price(rng, "1.00", "2.00")))
        market.quiet.update({quiet: key} if quiet else {})
    await until(lambda: _all_live(market), "the first offers are live", 60)
    return market


async def _catalog_has(client: Client) -> bool:
    response = await client.send("GET", "/v1/gpus")
    if response is None or response.status_code != 200:
        return False
    known = {gpu["id"] for gpu in response.json()["items"]}
    return set(GPUS) <= known


async def _funded(client: Client, key: str) -> bool:
    wallets = await client.ok("GET", "/v1/accounts/me/balances", key)
    return any(w["currency"] == CURRENCY and Decimal(w["available"]) > 0 for w in wallets["items"])


async def _all_live(market: Market) -> bool:
    for offer_id, key in market.offers.items():
        offer = await market.client.ok("GET", f"/v1/offers/{offer_id}", key)
        if offer["status"] != "live":
            return False
    return True


def order_body(rng: random.Random) -> tuple[dict[str, Any], bool]:
    """A random order, and whether its buyer cancels it a moment later."""
    body: dict[str, Any] = {
        "gpu": rng.choice(TRADED),
        "gpus": rng.randint(1, 3),
        "currency": CURRENCY,
        "tier": TIER,
        "hours": 1,
    }
    kind = rng.choice(("market", "market", "limit-ioc", "limit-gtd", "limit-gtc"))
    if kind == "market":
        body.update(type="market", max_price_per_gpu_hour="1.00", time_in_force="ioc")
        return body, False
    body.update(type="limit", max_price_per_gpu_hour=price(rng, "0.40", "0.75"))
    if kind == "limit-ioc":
        body["time_in_force"] = "ioc"
    elif kind == "limit-gtd":
        expires = datetime.now(UTC) + timedelta(seconds=rng.uniform(2, 8))
        body.update(time_in_force="gtd", expires_at=expires.isoformat())
    else:
        body["time_in_force"] = "gtc"
    return body, kind == "limit-gtc"


@dataclass
class Load:
    """Orders at ``order_rate``/s and offer changes at ``offer_rate``/s until stopped."""

    market: Market
    rng: random.Random
    order_rate: float
    offer_rate: float
    tasks: set[asyncio.Task[None]] = field(default_factory=set)

    async def run(self, stop: asyncio.Event) -> None:
        """Both tickers until ``stop`` is set; then wait for the requests in flight."""
        await asyncio.gather(
            self._tick(self.order_rate, self._order, stop),
            self._tick(self.offer_rate, self._offer_change, stop),
        )
        await asyncio.gather(*self.tasks)

    async def _tick(
        self, rate: float, job: Callable[[], Coroutine[Any, Any, None]], stop: asyncio.Event
    ) -> None:
        started = time.monotonic()
        sent = 0
        while not stop.is_set():
            task = asyncio.create_task(job())
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)
            sent += 1
            await asyncio.sleep(max(0.0, started + sent / rate - time.monotonic()))

    async def _order(self) -> None:
        body, cancel = order_body(self.rng)
        key = self.rng.choice(self.market.buyers[:-1])
        wait_s = self.rng.uniform(0.5, 4)
        order_id = await self.market.place(key, body)
        if order_id is not None and cancel:
            await asyncio.sleep(wait_s)
            await self.market.cancel(order_id, key)

    async def _offer_change(self) -> None:
        market = self.market
        if self.rng.random() < 0.25:
            body = offer_body(
                self.rng.choice(TRADED), self.rng.randint(20, 100), price(self.rng, "0.50", "0.90")
            )
            await market.offer(self.rng.choice(market.sellers), body)
            return
        offer_id, key = self.rng.choice(
            sorted(item for item in market.offers.items() if item[0] not in market.quiet)
        )
        change = {"price_per_gpu_hour": price(self.rng, "0.45", "0.95")}
        response = await market.client.send("PATCH", f"/v1/offers/{offer_id}", key, change)
        if response is not None and response.status_code == 202:
            market.reprices += 1
