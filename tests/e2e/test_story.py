"""The whole market, end to end: every service as its own process, only REST and the CLI.

Two sellers push offers (USD on-demand per second; EUR on-demand hourly), a buyer tops up
100 EUR, takes 8 GPUs across both sellers with a market order, rests a limit order that fills
when a cheaper offer arrives, stops the per-second lease after a measured interval, lets the
hourly lease cross an hour, and runs out of credit. Meanwhile, on another GPU model, capacity
comes and goes: a spot buyer's interruptible lease is preempted by an on-demand buyer with
notice, its order re-buys, and when the on-demand lease stops its GPUs come back and fill the
re-buy. The exchange's clock runs 600 times faster than the wall clock (GPUX_CLOCK_SPEED), so
an hour passes in 6 s and the 120 s notice in 0.2 s; nothing sleeps for an hour.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from gpux_contracts.money import accrued_micros, quantize, to_micros
from gpux_devinfra.testing.account_api import AccountApi
from gpux_devinfra.testing.processes import ServiceProcess, service_env
from gpux_platform.settings import GpuxSettings

SPEED = 600
SETTLE_EVERY_S = 300
GPU = "h100-sxm"
SPOT_GPU = "l40s"
SERVICES = ("catalog", "pricing", "matching", "billing", "gateway")
FINAL = {"filled", "cancelled", "expired", "rejected"}
LOGS = Path(os.environ.get("GPUX_HOME", ".gpux")) / "logs" / "e2e"


@dataclass
class Exchange:
    """The running exchange: the gateway's URL and the environment its processes share."""

    url: str
    env: dict[str, str]


def _env(settings: GpuxSettings, epoch: datetime) -> dict[str, str]:
    """One service's environment: the session's endpoints, its own port, the shared clock."""
    return service_env(
        settings,
        clock_speed=SPEED,
        clock_epoch=epoch,
        dev_topups="true",
        settle_every_s=SETTLE_EVERY_S,
        settle_tick_s=0.2,
        anonymous_rate_limit="10000/minute",
        rate_limit="10000/minute",
    )


@pytest.fixture(scope="module")
async def exchange(module_settings: GpuxSettings) -> AsyncIterator[Exchange]:
    LOGS.mkdir(parents=True, exist_ok=True)
    epoch = datetime.now(UTC)
    processes: list[ServiceProcess] = []
    for name in SERVICES:
        log = LOGS / f"{name}.log"
        log.unlink(missing_ok=True)
        processes.append(ServiceProcess(f"gpux_{name}", _env(module_settings, epoch), log))
    try:
        for process in processes:
            process.start()
        for process in processes:
            await process.ready(timeout_s=90)
        gateway = processes[-1]
        yield Exchange(gateway.url, gateway.env)
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            process.stop()


class Api(AccountApi):
    """One account's view of the REST API."""

    until_timeout_s = 60
    until_interval_s = 0.25

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

    async def order_until(self, body: dict[str, Any], status: str) -> dict[str, Any]:
        """Place the order ``body``; the order once it has ``status``."""
        placed = await self.call("POST", "/v1/orders", json=body)
        order: dict[str, Any] = await self.until(
            f"/v1/orders/{placed['id']}", lambda o: o["status"] == status
        )
        return order


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
    # Ready at the lease's start (charged from the trade) unless the story says otherwise.
    body = {"gpu": GPU, "provisioning_timeout_seconds": 0, **offer}
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

    # Two sellers push offers: USD on-demand billed per second, EUR on-demand hourly.
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
        tier="on_demand",
        billing="hour",
    )
    await the_buyer_tops_up_and_sees_the_best_asks(exchange, buyer)
    per_second, hourly = await a_market_order_fills_across_both_sellers(exchange, buyer)
    await a_limit_order_rests_then_fills(buyer, usd_seller)
    await the_per_second_lease_is_billed_the_seconds_it_ran(exchange, buyer, per_second)

    # The hourly lease crosses an hour boundary (6 s of wall clock at this speed).
    crossed = await buyer.until(
        f"/v1/leases/{hourly['lease_id']}",
        lambda x: micros(x["total_charged"]) >= 2 * 4 * micros("2.50"),
        timeout_s=30,
    )
    assert micros(crossed["total_charged"]) % (4 * micros("2.50")) == 0

    await capacity_returns_after_an_interruption(url)

    leases = await the_buyer_runs_out_of_credit(buyer)
    await every_unit_of_money_is_accounted_for(buyer, (usd_seller, eur_seller), leases)

    # Every order is in exactly one final state.
    orders = await buyer.pages("/v1/orders", {})
    assert len(orders) == 2
    assert {o["status"] for o in orders} <= FINAL
    for api in (usd_seller, eur_seller, buyer):
        await api.client.aclose()


async def the_buyer_tops_up_and_sees_the_best_asks(exchange: Exchange, buyer: Api) -> None:
    """100 EUR of credit, then the best on-demand ask (through the CLI): the USD offer's."""
    await buyer.call(
        "POST", "/v1/topups", json={"amount": "100", "currency": "EUR", "provider": "dev"}
    )
    await buyer.until(
        "/v1/accounts/me/balances",
        lambda b: any(w["currency"] == "EUR" and w["available"] == "100.00" for w in b["items"]),
    )
    prices = cli(exchange, buyer, "prices", "--currency", "EUR")
    books = {(p["gpu"], p["tier"]): p for p in prices if p["gpu"] == GPU}
    assert books[(GPU, "on_demand")]["best_ask"]["offered_price"] == "2.00"
    assert not books.get((GPU, "interruptible"), {}).get("best_ask")


async def a_market_order_fills_across_both_sellers(
    exchange: Exchange, buyer: Api
) -> tuple[dict[str, Any], dict[str, Any]]:
    """A market order for 8 GPUs fills 4 + 4 across both sellers, at their prices; the two
    leases it opened (per second, hourly)."""
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
    return per_second, hourly


async def a_limit_order_rests_then_fills(buyer: Api, usd_seller: Api) -> None:
    """A limit order below the best ask rests, then fills when a cheaper offer arrives."""
    limit = await buyer.order_until(
        {
            "gpu": GPU, "gpus": 1, "type": "limit", "max_price_per_gpu_hour": "2.20",
            "currency": "EUR", "tier": "any", "time_in_force": "gtc",
        },
        "open",
    )  # fmt: skip
    limit_id = limit["id"]
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


async def the_per_second_lease_is_billed_the_seconds_it_ran(
    exchange: Exchange, buyer: Api, per_second: dict[str, Any]
) -> None:
    """Stopped after a measured interval: billed exactly those seconds, converted into EUR at
    the rate stored on each charge."""
    await asyncio.sleep(2)
    stopped = cli(exchange, buyer, "leases", "stop", per_second["lease_id"])
    assert stopped["status"] == "stop_requested"
    done = await buyer.until(
        f"/v1/leases/{per_second['lease_id']}", lambda x: x["status"] == "ended"
    )
    assert done["end_reason"] == "stopped"
    started = datetime.fromisoformat(done["started_at"])
    ended = datetime.fromisoformat(done["ended_at"])
    requested = datetime.fromisoformat(stopped["requested_at"])
    # The lease ends when the stop was asked, or at its last settled instant if settlement
    # charged past that before billing read the stop (a period of GPUX_SETTLE_EVERY_S, 300 s
    # of the exchange's time, ends every 0.5 s of the wall clock here).
    settled_past = ended > requested and (ended - started).total_seconds() % SETTLE_EVERY_S == 0
    assert ended == requested or settled_past, (started, requested, ended)
    delta = ended - started
    seconds = delta.days * 86_400 + delta.seconds
    assert seconds > 0
    expected = accrued_micros(micros("2.00") * 4, seconds)
    assert micros(done["total_charged"]) == expected
    charges = [
        line
        for line in await buyer.pages("/v1/ledger", {"currency": "EUR"})
        if line["transfer_id"].startswith(f"charge:{per_second['lease_id']}:")
    ]
    assert charges
    assert all(line["fx_rate"] for line in charges)
    paid = -sum(micros(line["amount"]) for line in charges)
    assert paid == micros(done["total_paid"])


async def capacity_returns_after_an_interruption(url: str) -> None:
    """One pool of 4 GPUs with both prices. A spot buyer's interruptible limit order (re-buy on
    interruption) leases all 4; an on-demand buyer's order preempts that lease (below), and the
    re-buy order rests; the on-demand buyer stops, the GPUs come back, and the re-buy takes
    them."""
    seller = await sign_up(url, "Spot Works", "seller")
    spot = await sign_up(url, "Checkpointing trainer", "buyer")
    steady = await sign_up(url, "Inference service", "buyer")
    for api in (spot, steady):
        await api.call(
            "POST", "/v1/topups", json={"amount": "100", "currency": "EUR", "provider": "dev"}
        )
    offer_id = await push_offer(
        seller,
        gpu=SPOT_GPU,
        gpus=4,
        price_per_gpu_hour="3.00",
        interruptible_price_per_gpu_hour="1.00",
        currency="EUR",
        tier="on_demand",
        billing="second",
    )
    await spot.order_until(
        {
            "gpu": SPOT_GPU, "gpus": 4, "type": "limit", "max_price_per_gpu_hour": "1.50",
            "currency": "EUR", "tier": "interruptible", "time_in_force": "gtc",
            "rebuy_on_interruption": True,
        },
        "filled",
    )  # fmt: skip
    (first,) = leases_of(await spot.until("/v1/leases", lambda b: len(b["items"]) == 1))
    assert (first["tier"], first["billing"]) == ("interruptible", "second")
    steady_lease = await the_spot_lease_is_preempted(spot, steady, first)

    # The re-buy rests (nothing is free); the on-demand lease stops and its GPUs fill it.
    orders = await spot.until(
        "/v1/orders", lambda b: any(o.get("rebuy_of") == first["lease_id"] for o in b["items"])
    )
    rebuy = next(o for o in orders["items"] if o.get("rebuy_of") == first["lease_id"])
    await spot.until(f"/v1/orders/{rebuy['id']}", lambda o: o["status"] == "open")
    await steady.until(f"/v1/leases/{steady_lease['lease_id']}", lambda x: x["status"] == "running")
    await steady.call("POST", f"/v1/leases/{steady_lease['lease_id']}/stop")
    await spot.until(f"/v1/orders/{rebuy['id']}", lambda o: o["status"] == "filled")
    again = await spot.until("/v1/leases", lambda b: len(b["items"]) == 2)
    assert {x["offer_id"] for x in leases_of(again)} == {offer_id}
    for api in (seller, spot, steady):
        await api.client.aclose()


async def the_spot_lease_is_preempted(
    spot: Api, steady: Api, first: dict[str, Any]
) -> dict[str, Any]:
    """An on-demand market order preempts the spot lease with the 120 s notice; the lease ends
    exactly at ``interrupt_at``, billed to it, and the on-demand lease starts then; that lease."""
    await steady.order_until(
        {
            "gpu": SPOT_GPU, "gpus": 4, "type": "market", "max_price_per_gpu_hour": "3.50",
            "currency": "EUR", "tier": "on_demand", "time_in_force": "ioc",
        },
        "filled",
    )  # fmt: skip
    interrupted = await spot.until(
        f"/v1/leases/{first['lease_id']}", lambda x: x["status"] == "ended"
    )
    assert interrupted["end_reason"] == "interrupted"
    assert interrupted["interruption_cause"] == "preempted"
    assert interrupted["ended_at"] == interrupted["interrupt_at"]
    noticed = datetime.fromisoformat(interrupted["interruption_noticed_at"])
    assert (datetime.fromisoformat(interrupted["interrupt_at"]) - noticed).total_seconds() >= 120
    delta = datetime.fromisoformat(interrupted["ended_at"]) - datetime.fromisoformat(
        interrupted["started_at"]
    )
    ran = delta.days * 86_400 + delta.seconds
    assert micros(interrupted["total_charged"]) == accrued_micros(micros("1.00") * 4, ran)
    (steady_lease,) = leases_of(await steady.until("/v1/leases", lambda b: len(b["items"]) == 1))
    assert steady_lease["started_at"] == interrupted["interrupt_at"]
    return steady_lease


async def the_buyer_runs_out_of_credit(buyer: Api) -> list[dict[str, Any]]:
    """A warning, then a lease ends with insufficient_funds; every lease, all ended."""
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
    return leases_of(broke)


async def every_unit_of_money_is_accounted_for(
    buyer: Api, sellers: tuple[Api, ...], leases: list[dict[str, Any]]
) -> None:
    """Buyer paid = sellers earned + platform fee, per currency, to the unit; what left the
    buyer's EUR wallet is what its leases paid, in EUR."""
    charged: dict[str, int] = {}
    for lease in leases:
        charged[lease["currency"]] = charged.get(lease["currency"], 0) + micros(
            lease["total_charged"]
        )
    earned: dict[str, tuple[int, int]] = {}
    for seller in sellers:
        for item in (await seller.call("GET", "/v1/accounts/me/earnings"))["items"]:
            net, fee = earned.get(item["currency"], (0, 0))
            earned[item["currency"]] = (net + micros(item["net"]), fee + micros(item["fee"]))
    assert {c: net + fee for c, (net, fee) in earned.items()} == charged
    balances = await buyer.until(
        "/v1/accounts/me/balances", lambda b: any(w["currency"] == "EUR" for w in b["items"])
    )
    (eur,) = [w for w in balances["items"] if w["currency"] == "EUR"]
    assert micros(eur["held"]) == 0
    paid_eur = sum(micros(x["total_paid"]) for x in leases)
    assert micros("100") - micros(eur["available"]) == paid_eur
