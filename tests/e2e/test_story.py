"""The whole market, end to end: every service as its own process, only REST and the CLI.

Two sellers push offers (USD on-demand per second; EUR interruptible hourly), a buyer tops up
100 EUR, takes 8 GPUs across both sellers with a market order, rests a limit order that fills
when a cheaper offer arrives, stops the per-second lease after a measured interval, lets the
hourly lease cross an hour, and runs out of credit. The exchange's clock runs 600 times faster
than the wall clock (GPUX_CLOCK_SPEED), so an hour passes in 6 s; nothing sleeps for an hour.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest

from gpux_contracts.money import accrued_micros, quantize, to_micros
from gpux_devinfra.testing.services import free_port
from gpux_platform.settings import GpuxSettings

SPEED = 600
GPU = "h100-sxm"
SERVICES = ("catalog", "pricing", "matching", "billing", "gateway")
FINAL = {"filled", "cancelled", "expired", "rejected"}
LOGS = Path(os.environ.get("GPUX_HOME", ".gpux")) / "logs" / "e2e"


@dataclass
class Exchange:
    """The running exchange: the gateway's URL and the environment its processes share."""

    url: str
    env: dict[str, str]


def _env(settings: GpuxSettings) -> dict[str, str]:
    return {
        **os.environ,
        "GPUX_ENV": "test",
        "GPUX_KAFKA_BOOTSTRAP": settings.kafka_bootstrap,
        "GPUX_DATABASE_URL": settings.database_url.get_secret_value(),
        "GPUX_REDIS_URL": settings.redis_url,
        "GPUX_NAMESPACE": settings.namespace,
        "GPUX_CLOCK_SPEED": str(SPEED),
        "GPUX_CLOCK_EPOCH": datetime.now(UTC).isoformat(),
        "GPUX_DEV_TOPUPS": "true",
        "GPUX_SETTLE_EVERY_S": "300",
        "GPUX_SETTLE_TICK_S": "0.2",
        "GPUX_ANONYMOUS_RATE_LIMIT": "10000/minute",
        "GPUX_RATE_LIMIT": "10000/minute",
    }


@pytest.fixture(scope="module")
async def exchange(module_settings: GpuxSettings) -> AsyncIterator[Exchange]:
    env = _env(module_settings)
    LOGS.mkdir(parents=True, exist_ok=True)
    processes: list[subprocess.Popen[bytes]] = []
    ports = {name: free_port() for name in SERVICES}
    try:
        for name in SERVICES:
            with (LOGS / f"{name}.log").open("wb") as log:
                processes.append(
                    subprocess.Popen(  # noqa: ASYNC220 - our own modules, started at once
                        [sys.executable, "-m", f"gpux_{name}"],
                        env={**env, "GPUX_HTTP_PORT": str(ports[name])},
                        stdout=log,
                        stderr=subprocess.STDOUT,
                        stdin=subprocess.DEVNULL,
                    )
                )
        async with httpx.AsyncClient() as client:
            for name, process in zip(SERVICES, processes, strict=True):
                await _ready(client, name, ports[name], process)
        yield Exchange(f"http://127.0.0.1:{ports['gateway']}", env)
    finally:
        for process in processes:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in processes:
            try:
                process.wait(20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


async def _ready(
    client: httpx.AsyncClient, name: str, port: int, process: subprocess.Popen[bytes]
) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 90
    while loop.time() < deadline:
        assert process.poll() is None, f"{name} exited; see {LOGS / (name + '.log')}"
        try:
            if (await client.get(f"http://127.0.0.1:{port}/readyz")).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        await asyncio.sleep(0.3)
    raise AssertionError(f"{name} was not ready in 90 s")


class Api:
    """One account's view of the REST API."""

    def __init__(self, url: str, api_key: str | None = None) -> None:
        headers = {} if api_key is None else {"Authorization": f"Bearer {api_key}"}
        self.client = httpx.AsyncClient(base_url=url, headers=headers, timeout=10)
        self.api_key = api_key

    async def call(self, method: str, path: str, **kwargs: Any) -> Any:
        response = await self.client.request(method, path, **kwargs)
        assert response.status_code < 300, f"{method} {path}: {response.text}"
        return response.json()

    async def pages(self, path: str, query: dict[str, str]) -> list[dict[str, Any]]:
        """Every item of a paginated list."""
        items: list[dict[str, Any]] = []
        cursor: str | None = None
        while True:
            params = {**query, "limit": "100", **({"cursor": cursor} if cursor else {})}
            page = await self.call("GET", path, params=params)
            items += page["items"]
            cursor = page.get("next_cursor")
            if not cursor:
                return items

    async def until(self, path: str, check: Callable[[Any], bool], timeout_s: float = 60) -> Any:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        body = await self.call("GET", path)
        while not check(body):
            assert loop.time() < deadline, f"GET {path} never matched; last: {body}"
            await asyncio.sleep(0.25)
            body = await self.call("GET", path)
        return body


async def sign_up(url: str, name: str, role: str) -> Api:
    anonymous = Api(url)
    created = await anonymous.call("POST", "/v1/accounts", json={"name": name, "roles": [role]})
    await anonymous.client.aclose()
    return Api(url, created["api_key"])


def cli(exchange: Exchange, api: Api, *args: str) -> Any:
    """Run ``gpux ARGS --json`` as the account and return what it printed."""
    gpux = Path(sys.executable).with_name("gpux")
    done = subprocess.run(
        [str(gpux), *args, "--json"],
        env={**exchange.env, "GPUX_API_URL": exchange.url, "GPUX_API_KEY": api.api_key or ""},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, f"gpux {' '.join(args)}: {done.stdout}{done.stderr}"
    return json.loads(done.stdout)


def micros(text: str) -> int:
    return to_micros(quantize(Decimal(text)))


async def push_offer(seller: Api, **offer: Any) -> str:
    body = {"gpu": GPU, **offer}
    created = await seller.call("POST", "/v1/offers", json=body)
    offer_id: str = created["id"]
    # Live on the book, or taken at once by a resting bid.
    await seller.until(f"/v1/offers/{offer_id}", lambda o: o["status"] in ("live", "exhausted"))
    return offer_id


def leases_of(body: Any) -> list[dict[str, Any]]:
    return list(body["items"])


async def test_the_market_story(exchange: Exchange) -> None:
    url = exchange.url
    usd_seller = await sign_up(url, "Lone Star GPUs", "seller")
    eur_seller = await sign_up(url, "Nordic GPU Farm", "seller")
    buyer = await sign_up(url, "Fine-tuner", "buyer")

    # Two sellers push offers: USD on-demand billed per second, EUR interruptible hourly.
    await push_offer(
        usd_seller,
        gpus=4,
        price_per_gpu_hour="2.00",
        currency="USD",
        tier="on_demand",
        billing="second",
    )
    await push_offer(
        eur_seller,
        gpus=6,
        price_per_gpu_hour="2.50",
        currency="EUR",
        tier="interruptible",
        billing="hour",
    )

    # The buyer tops up 100 EUR and sees the best asks (through the CLI).
    await buyer.call(
        "POST", "/v1/topups", json={"amount": "100", "currency": "EUR", "provider": "dev"}
    )
    await buyer.until(
        "/v1/accounts/me/balances",
        lambda b: any(w["currency"] == "EUR" and w["available"] == "100.00" for w in b),
    )
    prices = cli(exchange, buyer, "prices", "--currency", "EUR")
    books = {(p["gpu"], p["tier"]): p for p in prices if p["gpu"] == GPU}
    assert books[(GPU, "on_demand")]["best_ask"]["offered_price"] == "2.00"
    assert books[(GPU, "interruptible")]["best_ask"]["offered_price"] == "2.50"

    # A market order for 8 GPUs fills 4 + 4 across both sellers, at their prices.
    market = cli(
        exchange, buyer, "order", "buy", "--gpu", GPU, "--gpus", "8", "--currency", "EUR",
        "--market", "--cap", "3.00",
    )  # fmt: skip
    order = await buyer.until(f"/v1/orders/{market['id']}", lambda o: o["status"] in FINAL)
    assert order["status"] == "filled"
    fills = sorted((f["gpus"], f["price_per_gpu_hour"], f["currency"]) for f in order["fills"])
    assert fills == [(4, "2.00", "USD"), (4, "2.50", "EUR")]

    leases = leases_of(await buyer.until("/v1/leases", lambda b: len(b["items"]) == 2))
    per_second = next(x for x in leases if x["billing"] == "second")
    hourly = next(x for x in leases if x["billing"] == "hour")
    assert per_second["wallet_currency"] == "EUR"
    assert per_second["currency"] == "USD"

    # A limit order below the best ask rests, then fills when a cheaper offer arrives.
    limit = await buyer.call(
        "POST",
        "/v1/orders",
        json={
            "gpu": GPU, "gpus": 1, "type": "limit", "max_price_per_gpu_hour": "2.20",
            "currency": "EUR", "tier": "any", "time_in_force": "gtc",
        },
    )  # fmt: skip
    limit_id = limit["id"]
    await buyer.until(f"/v1/orders/{limit_id}", lambda o: o["status"] == "open")
    await push_offer(
        usd_seller,
        gpus=1,
        price_per_gpu_hour="2.00",
        currency="USD",
        tier="on_demand",
        billing="second",
    )
    filled = await buyer.until(f"/v1/orders/{limit_id}", lambda o: o["status"] == "filled")
    assert len(filled["fills"]) == 1

    # Stop the per-second lease after a measured interval: billed exactly those seconds.
    await asyncio.sleep(2)
    stopped = cli(exchange, buyer, "leases", "stop", per_second["lease_id"])
    assert stopped["status"] == "stop_requested"
    done = await buyer.until(
        f"/v1/leases/{per_second['lease_id']}", lambda x: x["status"] == "ended"
    )
    assert done["end_reason"] == "stopped"
    started = datetime.fromisoformat(done["started_at"])
    ended = datetime.fromisoformat(done["ended_at"])
    assert ended == datetime.fromisoformat(stopped["requested_at"])
    delta = ended - started
    seconds = delta.days * 86_400 + delta.seconds
    assert seconds > 0
    expected = accrued_micros(micros("2.00") * 4, seconds)
    assert micros(done["total_charged"]) == expected
    # Converted into EUR at the rate stored on each charge.
    charges = [
        line
        for line in await buyer.pages("/v1/ledger", {"currency": "EUR"})
        if line["transfer_id"].startswith(f"charge:{per_second['lease_id']}:")
    ]
    assert charges
    assert all(line["fx_rate"] for line in charges)
    paid = -sum(micros(line["amount"]) for line in charges)
    assert paid == micros(done["total_paid"])

    # The hourly lease crosses an hour boundary (6 s of wall clock at this speed).
    crossed = await buyer.until(
        f"/v1/leases/{hourly['lease_id']}",
        lambda x: micros(x["total_charged"]) >= 2 * 4 * micros("2.50"),
        timeout_s=30,
    )
    assert micros(crossed["total_charged"]) % (4 * micros("2.50")) == 0

    # The buyer runs out of credit: a warning, then a lease ends with insufficient_funds.
    broke = await buyer.until(
        "/v1/leases?limit=100",
        lambda b: all(x["status"] == "ended" for x in b["items"]),
        timeout_s=120,
    )
    reasons = {x["lease_id"]: x["end_reason"] for x in broke["items"]}
    assert "insufficient_funds" in reasons.values()
    assert all(
        x["low_balance_at"] is not None
        for x in broke["items"]
        if x["end_reason"] == "insufficient_funds"
    )

    # Buyer paid = sellers earned + platform fee, per currency, to the unit.
    charged: dict[str, int] = {}
    for lease in broke["items"]:
        charged[lease["currency"]] = charged.get(lease["currency"], 0) + micros(
            lease["total_charged"]
        )
    earned: dict[str, tuple[int, int]] = {}
    for seller in (usd_seller, eur_seller):
        for item in (await seller.call("GET", "/v1/accounts/me/earnings"))["items"]:
            net, fee = earned.get(item["currency"], (0, 0))
            earned[item["currency"]] = (net + micros(item["net"]), fee + micros(item["fee"]))
    assert {c: net + fee for c, (net, fee) in earned.items()} == charged
    # What left the buyer's EUR wallet is what its leases paid, in EUR.
    balances = await buyer.until(
        "/v1/accounts/me/balances", lambda b: any(w["currency"] == "EUR" for w in b)
    )
    (eur,) = [w for w in balances if w["currency"] == "EUR"]
    assert micros(eur["held"]) == 0
    paid_eur = sum(micros(x["total_paid"]) for x in broke["items"])
    assert micros("100") - micros(eur["available"]) == paid_eur

    # Every order is in exactly one final state.
    orders = await buyer.pages("/v1/orders", {})
    assert len(orders) == 2
    assert {o["status"] for o in orders} <= FINAL
    for api in (usd_seller, eur_seller, buyer):
        await api.client.aclose()
