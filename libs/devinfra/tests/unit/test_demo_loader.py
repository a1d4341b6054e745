"""The demo loader against an in-memory gateway: what it sends, and that a rerun sends nothing.

The real chain is exercised by tests/integration/test_demo_load.py; this fake only keeps the
state the loader reads back (accounts, offers, balances) so its decisions can be checked fast.
"""

from __future__ import annotations

import io
import json
import stat
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from rich.console import Console

from gpux_catalog.adapters.files import load_gpu_catalog
from gpux_catalog.service.publication import gpu_messages
from gpux_devinfra import exchange
from gpux_devinfra.demo.dataset import BUYER, SELLERS
from gpux_devinfra.demo.loader import DemoAccount, DemoError, DemoResult, load_demo
from gpux_devinfra.infra import Endpoints
from gpux_devinfra.testing.cli import Route
from gpux_devinfra.testing.market import OFFER
from gpux_gateway.catalog.schemas import GpuList, GpuOut
from gpux_gateway.readmodels.catalog import CatalogView
from gpux_platform.broker import encode

pytestmark = pytest.mark.unit

URL = "http://gw.test"
STAMP = "2025-01-01T00:00:00Z"


def catalog(without: frozenset[str] = frozenset()) -> dict[str, Any]:
    """GET /v1/gpus as the gateway answers it from the catalog's records."""
    view = CatalogView("gpus", "models")
    messages = gpu_messages(load_gpu_catalog(), datetime(2025, 1, 1, tzinfo=UTC))
    for offset, message in enumerate(messages):
        view.apply("gpus", 0, offset, message.key.encode(), encode(message.envelope))
    items = [GpuOut.model_validate(g.model_dump()) for g in view.gpus() if g.id not in without]
    return GpuList(items=items).model_dump(mode="json")


def account(account_id: str) -> dict[str, Any]:
    return {
        "id": account_id,
        "name": "demo",
        "roles": ["buyer"],
        "status": "active",
        "created_at": STAMP,
    }


def offer_out(body: dict[str, Any], offer_id: str, status: str) -> dict[str, Any]:
    """An offer as GET /v1/offers shows it: the body as sent, and what the gateway adds."""
    return {
        **OFFER,
        **body,
        "id": offer_id,
        "capacity_gpus": body["gpus"],
        "remaining_gpus": body["gpus"],
        "status": status,
    }


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
            ("GET", "/v1/accounts/me"): lambda _, who: httpx.Response(200, json=account(who)),
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
        return httpx.Response(200, json=catalog())

    def sign_up(self, request: httpx.Request) -> httpx.Response:
        idem = request.headers.get("idempotency-key")
        if idem not in self.idem:
            account_id = f"acc{len(self.keys)}"
            key = f"gpx_{account_id}_s"
            self.keys[key] = account_id
            key_out = {
                "id": f"key{account_id}",
                "name": "api key",
                "prefix": f"gpx_{account_id}",
                "scopes": ["read"],
                "created_at": STAMP,
                "revoked_at": None,
            }
            made = {"account": account(account_id), "api_key": key, "key": key_out}
            self.idem[idem] = made
        return httpx.Response(201, json=self.idem[idem])

    def list_offers(self, _: httpx.Request, who: str) -> httpx.Response:
        return httpx.Response(200, json={"items": self.offers.get(who, []), "next_cursor": None})

    def push_offer(self, request: httpx.Request, who: str) -> httpx.Response:
        body = json.loads(request.content)
        offer_id = f"off{request.headers.get('idempotency-key')}"
        self.offers.setdefault(who, []).append(offer_out(body, offer_id, "live"))
        return httpx.Response(202, json=offer_out(body, offer_id, "pending"))

    def list_balances(self, _: httpx.Request, who: str) -> httpx.Response:
        rows = [{"currency": c, **v} for c, v in self.balances.get(who, {}).items()]
        return httpx.Response(200, json={"items": rows})

    def topup(self, request: httpx.Request, who: str) -> httpx.Response:
        body = json.loads(request.content)
        if self.dev_topups:
            wallet = self.balances.setdefault(who, {})
            wallet[body["currency"]] = {"available": body["amount"], "held": "0"}
        accepted = {"topup_id": "t", "account_id": who, "status": "requested", **body}
        return httpx.Response(202, json=accepted)


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
            return httpx.Response(200, json=catalog(without=frozenset({"h200"})))
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


def sign_up_keys(fake: FakeGateway) -> list[str | None]:
    return [idem for method, path, idem in fake.writes if path == "/v1/accounts"]


def test_sign_up_keys_are_unguessable_and_the_same_on_a_rerun(tmp_path: Path) -> None:
    """An anonymous sign-up sent again with its key is replayed to whoever sends it, new key
    included: a key anyone could derive from the demo's handles would hand its accounts out."""
    handles = [*(s.handle for s in SELLERS), BUYER.handle]
    first, other = FakeGateway(), FakeGateway()
    load(first, tmp_path / "keys.json")
    load(other, tmp_path / "other-keys.json")
    keys = sign_up_keys(first)
    assert len(keys) == len(handles)
    assert not set(keys) & set(sign_up_keys(other))  # another demo's secret, other keys
    for key, handle in zip(keys, handles, strict=True):
        assert key is not None
        assert key != f"gpux-demo-account-{handle}"
        assert handle not in key
    secret = json.loads((tmp_path / "keys.json").read_text())["secret"]
    assert len(secret) >= 32
    assert not any(secret in str(key) for key in keys)


def test_a_load_cut_short_after_its_sign_ups_signs_up_nobody_new_when_run_again(
    tmp_path: Path,
) -> None:
    fake = FakeGateway()
    keys_file = tmp_path / "keys.json"

    def cut_short(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/v1/offers":
            raise KeyboardInterrupt  # the loader stops after the sign-ups, before offers
        return fake(request)

    with pytest.raises(KeyboardInterrupt):
        load_demo(URL, keys_file=keys_file, transport=httpx.MockTransport(cut_short))
    signed_up = dict(fake.keys)
    (keys_file).write_text(json.dumps({**json.loads(keys_file.read_text()), "accounts": []}))
    again = load(fake, keys_file)  # the accounts lost, the secret kept: replayed sign-ups
    assert fake.keys == signed_up
    assert {a.api_key for a in again.accounts} == set(signed_up)


def test_the_keys_file_is_owner_only_and_replaced_whole_never_through_a_link(
    tmp_path: Path,
) -> None:
    keys_file = tmp_path / "keys.json"
    keys_file.write_text("{}")
    keys_file.chmod(0o644)  # left readable by an older loader, or by hand
    load(FakeGateway(), keys_file)
    assert stat.S_IMODE(keys_file.stat().st_mode) == 0o600
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text("not the demo's\n")
    linked = tmp_path / "linked.json"
    linked.symlink_to(elsewhere)
    load(FakeGateway(), linked)
    assert elsewhere.read_text() == "not the demo's\n"
    assert not linked.is_symlink()
    assert stat.S_IMODE(linked.stat().st_mode) == 0o600
    assert json.loads(linked.read_text())["accounts"]
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_make_up_suggests_a_login_that_keeps_the_key_off_the_command_line(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    buyer = DemoAccount("buyer", "Demo Buyer", "buyer", "01BUYER", "gpx_01BUYER_secret")
    monkeypatch.setattr(exchange, "demo_keys_file", lambda: tmp_path / "keys.json")
    monkeypatch.setattr(exchange, "load_demo", lambda *_, **__: DemoResult(URL, [buyer]))
    out = io.StringIO()
    assert exchange.load_demo_data(Console(file=out, width=200)) is not None
    suggestion = next(line for line in out.getvalue().splitlines() if line.startswith("try:"))
    assert buyer.api_key not in suggestion
    assert "uv run gpux login" in suggestion
    assert "--key" not in suggestion
