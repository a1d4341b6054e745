"""The demo loader against an in-memory gateway: what it sends, and that a rerun sends nothing.

The real chain is exercised by tests/integration/test_demo_load.py; this fake only keeps the
state the loader reads back (accounts, offers, balances) so its decisions can be checked fast.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from gpux_devinfra import exchange
from gpux_devinfra.demo.dataset import BUYER, SELLERS, demo_gpus
from gpux_devinfra.demo.loader import DemoError, load_demo
from gpux_devinfra.infra import Endpoints
from gpux_devinfra.testing.cli import Route

pytestmark = pytest.mark.unit

URL = "http://gw.test"


class FakeGateway:
    """Accounts, offers and wallets in memory; offers go live and top-ups book at once."""

    def __init__(self, *, dev_topups: bool = True, catalog_503s: int = 0) -> None:
        self.dev_topups = dev_topups
        self.catalog_503s = catalog_503s
        self.keys: dict[str, str] = {}  # api key -> account id
        self.idem: dict[str | None, Any] = {}
        self.offers: dict[str, list[dict[str, Any]]] = {}
        self.balances: dict[str, dict[str, dict[str, str]]] = {}
        self.writes: list[tuple[str, str, str | None]] = []
        self.public: dict[Route, Callable[[httpx.Request], httpx.Response]] = {
            ("GET", "/v1/gpus"): self.gpus,
            ("POST", "/v1/accounts"): self.sign_up,
        }
        self.signed: dict[Route, Callable[[httpx.Request, str], httpx.Response]] = {
            ("GET", "/v1/accounts/me"): lambda _, who: httpx.Response(200, json={"id": who}),
            ("GET", "/v1/offers"): self.list_offers,
            ("POST", "/v1/offers"): self.push_offer,
            ("GET", "/v1/accounts/me/balances"): self.list_balances,
            ("POST", "/v1/topups"): self.topup,
        }

    def account_of(self, request: httpx.Request) -> str | None:
        key = request.headers.get("authorization", "").removeprefix("Bearer ")
        return self.keys.get(key)

    def __call__(self, request: httpx.Request) -> httpx.Response:
        route = (request.method, request.url.path)
        if request.method == "POST":
            self.writes.append((*route, request.headers.get("idempotency-key")))
        if route in self.public:
            return self.public[route](request)
        who = self.account_of(request)
        if who is None:
            return httpx.Response(401, json={"title": "Unauthorized", "status": 401})
        if route in self.signed:
            return self.signed[route](request, who)
        return httpx.Response(404, json={"title": "Not found", "status": 404})

    def gpus(self, _: httpx.Request) -> httpx.Response:
        if self.catalog_503s:
            self.catalog_503s -= 1
            return httpx.Response(503, json={"title": "Catalog unavailable", "status": 503})
        return httpx.Response(200, json={"items": [{"id": g, "name": g} for g in demo_gpus()]})

    def sign_up(self, request: httpx.Request) -> httpx.Response:
        idem = request.headers.get("idempotency-key")
        if idem not in self.idem:
            account_id = f"acc{len(self.keys)}"
            key = f"gpx_{account_id}_s"
            self.keys[key] = account_id
            self.idem[idem] = {"account": {"id": account_id}, "api_key": key}
        return httpx.Response(201, json=self.idem[idem])

    def list_offers(self, _: httpx.Request, who: str) -> httpx.Response:
        return httpx.Response(200, json={"items": self.offers.get(who, []), "next_cursor": None})

    def push_offer(self, request: httpx.Request, who: str) -> httpx.Response:
        body = json.loads(request.content)
        offer = {**body, "id": f"off{request.headers.get('idempotency-key')}", "status": "live"}
        self.offers.setdefault(who, []).append(offer)
        return httpx.Response(202, json={**offer, "status": "pending"})

    def list_balances(self, _: httpx.Request, who: str) -> httpx.Response:
        rows = [{"currency": c, **v} for c, v in self.balances.get(who, {}).items()]
        return httpx.Response(200, json=rows)

    def topup(self, request: httpx.Request, who: str) -> httpx.Response:
        body = json.loads(request.content)
        if self.dev_topups:
            wallet = self.balances.setdefault(who, {})
            wallet[body["currency"]] = {"available": body["amount"], "held": "0"}
        return httpx.Response(202, json={"topup_id": "t", "status": "requested", **body})


def load(fake: FakeGateway, keys_file: Path | None, timeout_s: float = 5) -> Any:
    return load_demo(
        URL, keys_file=keys_file, transport=httpx.MockTransport(fake), timeout_s=timeout_s
    )


def test_a_first_load_signs_up_pushes_every_offer_and_funds_the_buyer(tmp_path: Path) -> None:
    fake = FakeGateway(catalog_503s=1)
    steps: list[str] = []
    keys_file = tmp_path / "keys.json"
    result = load_demo(
        URL, keys_file=keys_file, transport=httpx.MockTransport(fake), progress=steps.append
    )
    offered = sum(len(s.offers) for s in SELLERS)
    assert (result.offers_pushed, result.offers_live) == (offered, offered)
    assert result.topups == [f"{a} {c}" for c, a in BUYER.credit]
    assert all(idem for _, _, idem in fake.writes)
    assert len({idem for _, _, idem in fake.writes}) == len(fake.writes)
    assert steps[0] == "waiting for the catalog"
    stored = json.loads(keys_file.read_text())
    assert stored["gateway"] == URL
    assert [a["api_key"] for a in stored["accounts"]] == [a.api_key for a in result.accounts]


def test_a_second_load_sends_nothing(tmp_path: Path) -> None:
    fake = FakeGateway()
    first = load(fake, tmp_path / "keys.json")
    fake.writes.clear()
    second = load(fake, tmp_path / "keys.json")
    assert fake.writes == []
    assert second.accounts == first.accounts
    assert (second.offers_pushed, second.topups) == (0, [])


def test_stale_keys_mean_new_accounts_on_a_new_database(tmp_path: Path) -> None:
    keys_file = tmp_path / "keys.json"
    load(FakeGateway(), keys_file)
    fresh = FakeGateway()
    result = load(fresh, keys_file)
    assert result.offers_pushed == sum(len(s.offers) for s in SELLERS)
    assert {a.api_key for a in result.accounts} <= set(fresh.keys)


def test_a_missing_catalog_gpu_is_an_error(tmp_path: Path) -> None:
    fake = FakeGateway()
    real = fake.__call__

    def without_h200(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/v1/gpus":
            items = [{"id": g, "name": g} for g in demo_gpus() - {"h200"}]
            return httpx.Response(200, json={"items": items})
        return real(request)

    with pytest.raises(DemoError, match="h200"):
        load_demo(URL, transport=httpx.MockTransport(without_h200))


def test_without_dev_top_ups_the_loader_says_what_to_set() -> None:
    with pytest.raises(DemoError, match="GPUX_DEV_TOPUPS=true"):
        load(FakeGateway(dev_topups=False), None, timeout_s=0.5)


def test_services_get_dev_top_ups_and_one_clock_epoch_when_time_runs_faster() -> None:
    endpoints = Endpoints("k:1", "postgresql://db", "redis://r")
    env = exchange.service_env({"PATH": "/bin"}, endpoints)
    assert env["GPUX_DEV_TOPUPS"] == "true"
    assert env["GPUX_KAFKA_BOOTSTRAP"] == "k:1"
    assert "GPUX_CLOCK_EPOCH" not in env
    fast = exchange.service_env({"GPUX_CLOCK_SPEED": "60", "GPUX_DEV_TOPUPS": "false"}, endpoints)
    assert fast["GPUX_DEV_TOPUPS"] == "false"
    assert fast["GPUX_CLOCK_EPOCH"].endswith("+00:00")
    kept = exchange.service_env(
        {"GPUX_CLOCK_SPEED": "60", "GPUX_CLOCK_EPOCH": "2025-01-01T00:00:00Z"}, endpoints
    )
    assert kept["GPUX_CLOCK_EPOCH"] == "2025-01-01T00:00:00Z"
