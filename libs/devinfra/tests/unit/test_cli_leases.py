"""`gpux leases [stop|interruption|reclaim ID]`, `gpux ledger`, `gpux earnings` against a
fake transport."""

from __future__ import annotations

import json
import uuid

import httpx
import pytest
from typer.testing import Result

from gpux_devinfra.testing.cli import (
    KEY,
    FakeGateway,
    answer,
    line_with,
    problem,
    use_transport,
)
from gpux_devinfra.testing.cli import run as run_gpux

pytestmark = pytest.mark.unit


LEASE = {
    "lease_id": "01LEASE",
    "order_id": "01ORDER",
    "offer_id": "01OFFER",
    "gpu": "rtx-4090",
    "tier": "on_demand",
    "gpus": 4,
    "buyer_id": "01BUYER",
    "seller_id": "01SELLER",
    "price_per_gpu_hour": "0.40",
    "currency": "USD",
    "wallet_currency": "EUR",
    "billing": "second",
    "hours": None,
    "started_at": "2025-01-01T12:00:05.123456Z",
    "ends_at": None,
    "status": "running",
    "end_reason": None,
    "ended_at": None,
    "provisioning_deadline": None,
    "ready_at": None,
    "failure": None,
    "failure_detail": "",
    "interrupt_at": None,
    "interruption_cause": None,
    "interruption_noticed_at": None,
    "charged_through": "2025-01-01T12:10:05Z",
    "total_charged": "0.266666",
    "total_paid": "0.245333",
    "total_fee": "0.026666",
    "total_seller": "0.240000",
    "unpaid": "0",
    "low_balance_at": None,
    "cost_so_far": "0.280000",
}
ENDED = {
    **LEASE,
    "lease_id": "01LEASE2",
    "billing": "hour",
    "status": "ended",
    "end_reason": "insufficient_funds",
    "ended_at": "2025-01-01T14:00:00Z",
    "total_charged": "3.20",
    "cost_so_far": "3.20",
}
LEDGER = {
    "transfer_id": "01T",
    "kind": "topup",
    "created_at": "2025-01-01T11:00:00Z",
    "reference": "01TOPUP",
    "account_kind": "available",
    "currency": "EUR",
    "amount": "100.00",
    "fx_rate": None,
    "fx_base": None,
    "fx_quote": None,
    "fx_rate_at": None,
}
EARNINGS = {"currency": "USD", "gross": "3.466666", "fee": "0.346666", "net": "3.12"}


def _leases(request: httpx.Request) -> httpx.Response:
    if request.url.params.get("cursor") == "p2":
        return httpx.Response(200, json={"items": [ENDED], "next_cursor": None})
    return httpx.Response(200, json={"items": [LEASE], "next_cursor": "p2"})


STOPPED = {
    "lease_id": "01LEASE",
    "status": "stop_requested",
    "requested_at": "2025-01-01T12:30:00Z",
}

INTERRUPTION = {
    "lease_id": "01LEASE",
    "action": "terminate",
    "cause": "preempted",
    "noticed_at": "2025-01-01T12:30:00Z",
    "interrupt_at": "2025-01-01T12:32:00Z",
    "seconds_left": 95,
}

ROUTES = {
    ("GET", "/v1/leases"): _leases,
    ("GET", "/v1/leases/01LEASE/interruption"): answer(200, INTERRUPTION),
    ("GET", "/v1/leases/01QUIET/interruption"): answer(
        404, problem(404, "No interruption", "none is pending", "no-interruption")
    ),
    ("POST", "/v1/leases/01LEASE/reclaim"): answer(202, {**LEASE, "tier": "interruptible"}),
    ("POST", "/v1/leases/01LEASE/stop"): answer(202, STOPPED),
    ("GET", "/v1/ledger"): answer(200, {"items": [LEDGER], "next_cursor": None}),
    ("GET", "/v1/accounts/me/earnings"): answer(
        200, {"items": [{**EARNINGS, "leases": 2, "running": 1}]}
    ),
}
"""The lease, ledger and earnings endpoints."""


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> FakeGateway:
    gateway = FakeGateway(ROUTES)
    use_transport(monkeypatch, gateway)
    return gateway


def run(*args: str, env: dict[str, str] | None = None) -> Result:
    return run_gpux(*args, env=env, columns=220)


def test_leases_table_follows_pages_and_shows_cost_so_far(fake: FakeGateway) -> None:
    result = run("leases", "--key", KEY)
    assert result.exit_code == 0, result.output
    assert [(r.method, r.url.path) for r in fake.requests] == [("GET", "/v1/leases")] * 2
    assert all(r.headers["authorization"] == f"Bearer {KEY}" for r in fake.requests)
    running = line_with(result.stdout, "01LEASE ")
    # Amounts to the currency's precision (babel, en_US): 0.266666 USD charged is $0.27.
    for cell in ("rtx-4090", "4", "$0.40", "second", "running", "2025-01-01 12:00:05Z"):
        assert cell in running
    assert "$0.27" in running
    assert "$0.28" in running
    assert "ended (insufficient_funds)" in line_with(result.stdout, "01LEASE2")


def test_leases_filters_and_json(fake: FakeGateway) -> None:
    result = run(
        "leases", "--status", "running", "--role", "seller", "--json", env={"GPUX_API_KEY": KEY}
    )
    assert result.exit_code == 0, result.output
    params = fake.requests[0].url.params
    assert (params["status"], params["role"]) == ("running", "seller")
    assert fake.requests[1].url.params["status"] == "running"
    leases = json.loads(result.stdout)
    assert [lease["lease_id"] for lease in leases] == ["01LEASE", "01LEASE2"]
    assert leases[0]["cost_so_far"] == "0.280000"


def test_leases_stop_posts_and_reports(fake: FakeGateway) -> None:
    result = run("leases", "stop", "01LEASE", "--key", KEY)
    assert result.exit_code == 0, result.output
    assert fake.sent() == ("POST", "/v1/leases/01LEASE/stop", f"Bearer {KEY}")
    assert fake.last.headers["idempotency-key"] == "stop-01LEASE"
    assert len(fake.requests) == 1
    assert result.stdout.strip() == "lease 01LEASE: stop_requested at 2025-01-01T12:30:00Z"
    as_json = run("leases", "stop", "01LEASE", "--key", KEY, "--json")
    assert json.loads(as_json.stdout)["status"] == "stop_requested"


def test_a_retried_stop_sends_the_same_key(fake: FakeGateway) -> None:
    for _ in range(2):
        assert run("leases", "stop", "01LEASE", "--key", KEY).exit_code == 0
    assert [r.headers["idempotency-key"] for r in fake.requests] == ["stop-01LEASE"] * 2


def test_a_lease_id_that_cannot_make_a_key_is_sent_with_a_fresh_one(fake: FakeGateway) -> None:
    # Every write carries an Idempotency-Key: "stop-01 NOPE" is none the gateway takes.
    result = run("leases", "stop", "01 NOPE", "--key", KEY)
    assert result.exit_code == 1
    assert uuid.UUID(fake.last.headers["idempotency-key"])


def test_stopping_an_unknown_lease_is_one_line(fake: FakeGateway) -> None:
    fake.problem = problem(404, "Not found", "no such lease", "not-found")
    result = run("leases", "stop", "01NOPE", "--key", KEY)
    assert result.exit_code == 1
    assert result.stderr.strip() == "gpux: 404 Not found: no such lease"
    assert result.stdout == ""


def test_an_ended_lease_cannot_be_stopped_and_says_why(fake: FakeGateway) -> None:
    fake.problem = {"title": "Conflict", "status": 409, "detail": "the lease has ended"}
    result = run("leases", "stop", "01LEASE2", "--key", KEY)
    assert result.exit_code == 1
    assert result.stderr.strip() == "gpux: 409 Conflict: the lease has ended"


def test_an_interruption_is_when_and_why_and_none_pending_is_not_an_error(
    fake: FakeGateway,
) -> None:
    result = run("leases", "interruption", "01LEASE", "--key", KEY)
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == (
        "lease 01LEASE: interrupted at 2025-01-01T12:32:00Z (preempted, 95 s left)"
    )
    quiet = run("leases", "interruption", "01QUIET", "--key", KEY)
    assert quiet.exit_code == 0, quiet.output
    assert quiet.stdout.strip() == "lease 01QUIET: no interruption pending"
    unknown = run("leases", "interruption", "01NOPE", "--key", KEY)
    assert unknown.exit_code == 1
    assert unknown.stderr.startswith("gpux: 404")


def test_a_seller_reclaims_with_a_key_derived_from_the_lease(fake: FakeGateway) -> None:
    result = run("leases", "reclaim", "01LEASE", "--key", KEY)
    assert result.exit_code == 0, result.output
    assert fake.sent() == ("POST", "/v1/leases/01LEASE/reclaim", f"Bearer {KEY}")
    assert fake.last.headers["idempotency-key"] == "reclaim-01LEASE"
    assert result.stdout.strip() == "lease 01LEASE: reclaim requested"


def test_lease_commands_need_a_key(fake: FakeGateway) -> None:
    for args in (["leases"], ["leases", "stop", "01LEASE"], ["ledger"], ["earnings"]):
        result = run(*args, env={"GPUX_API_KEY": ""})
        assert result.exit_code == 1, args
        assert "needs an API key" in result.stderr
    assert fake.requests == []


def test_ledger_table_and_currency_filter(fake: FakeGateway) -> None:
    result = run("ledger", "--currency", "eur", "--key", KEY)
    assert result.exit_code == 0, result.output
    assert fake.last.url.path == "/v1/ledger"
    assert fake.last.url.params["currency"] == "EUR"
    row = line_with(result.stdout, "topup")
    for cell in ("2025-01-01 11:00:00Z", "available", "€100.00", "01TOPUP"):
        assert cell in row
    # --json is the SDK model's JSON: the API's fields, its instants written with +00:00.
    as_json = json.loads(run("ledger", "--json", "--key", KEY).stdout)
    assert as_json == [{**LEDGER, "created_at": "2025-01-01T11:00:00+00:00"}]


def test_a_currency_the_api_does_not_know_is_refused_before_calling(fake: FakeGateway) -> None:
    result = run("ledger", "--currency", "xyz", "--key", KEY)
    assert result.exit_code == 2
    assert fake.requests == []


def test_earnings_table(fake: FakeGateway) -> None:
    result = run("earnings", "--key", KEY)
    assert result.exit_code == 0, result.output
    assert fake.last.url.path == "/v1/accounts/me/earnings"
    row = line_with(result.stdout, "USD")
    for cell in ("$3.47", "$0.35", "$3.12", "2", "1"):
        assert cell in row
    as_json = json.loads(run("earnings", "--key", KEY, "--json").stdout)
    assert as_json[0]["gross"] == "3.466666"


def test_amounts_follow_the_locale_and_json_keeps_the_api_strings(fake: FakeGateway) -> None:
    result = run("--locale", "de_DE", "leases", "--key", KEY)
    assert result.exit_code == 0, result.output
    assert "0,27" in line_with(result.stdout, "01LEASE ")
    as_json = json.loads(run("leases", "--json", "--key", KEY).stdout)
    assert as_json[0]["total_charged"] == "0.266666"
