"""`gpux payouts request` and `gpux payouts list` against a fake transport."""

from __future__ import annotations

import json
import uuid

import httpx
import pytest
from typer.testing import Result

from gpux_devinfra.testing.cli import KEY, FakeGateway, answer, line_with, problem, use_transport
from gpux_devinfra.testing.cli import run as run_gpux

pytestmark = pytest.mark.unit

PAYOUT = {
    "id": "01PAYOUT",
    "currency": "EUR",
    "amount": "50.00",
    "method": "manual",
    "destination": "IBAN DE89 ...3000",
    "status": "pending_request",
    "reason": None,
    "reference": "",
    "created_at": "2026-12-01T12:00:00Z",
    "updated_at": "2026-12-01T12:00:00Z",
}
REJECTED = {
    **PAYOUT,
    "id": "01PAYOUT2",
    "status": "rejected",
    "reason": "insufficient_seller_payable",
}


def _payouts(request: httpx.Request) -> httpx.Response:
    if request.url.params.get("cursor") == "p2":
        return httpx.Response(200, json={"items": [REJECTED], "next_cursor": None})
    paid = {**PAYOUT, "status": "paid", "reference": "BANK-1"}
    return httpx.Response(200, json={"items": [paid], "next_cursor": "p2"})


ROUTES = {("POST", "/v1/payouts"): answer(202, PAYOUT), ("GET", "/v1/payouts"): _payouts}


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> FakeGateway:
    gateway = FakeGateway(ROUTES)
    use_transport(monkeypatch, gateway)
    return gateway


def run(*args: str) -> Result:
    return run_gpux(*args, columns=220)


def test_request_posts_the_payout_with_its_idempotency_key(fake: FakeGateway) -> None:
    result = run(
        "payouts", "request", "--currency", "EUR", "--amount", "50.00",
        "--destination", "IBAN DE89 ...3000", "--idempotency-key", "k-1", "--key", KEY,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert fake.sent() == ("POST", "/v1/payouts", f"Bearer {KEY}")
    assert fake.body() == {
        "currency": "EUR",
        "amount": "50.00",
        "destination": "IBAN DE89 ...3000",
    }
    assert fake.last.headers["idempotency-key"] == "k-1"
    assert "payout 01PAYOUT: €50.00 pending_request (manual)" in result.stdout


def test_without_a_key_given_each_request_sends_a_fresh_one(fake: FakeGateway) -> None:
    args = ("payouts", "request", "--currency", "EUR", "--amount", "50.00", "--destination", "x")
    for _ in range(2):
        assert run(*args, "--key", KEY).exit_code == 0
    keys = [r.headers["idempotency-key"] for r in fake.requests]
    assert len(set(keys)) == 2
    assert all(uuid.UUID(key) for key in keys)


def test_request_refuses_a_bad_amount_before_calling(fake: FakeGateway) -> None:
    for amount in ("50.001", "1e3", "-5", "ten"):
        result = run(
            "payouts", "request", "--currency", "EUR", "--amount", amount,
            "--destination", "x", "--key", KEY,
        )  # fmt: skip
        assert result.exit_code == 2, amount
    assert fake.requests == []


def test_a_refusal_is_one_line_and_exit_1(fake: FakeGateway) -> None:
    fake.problem = {
        **problem(422, "Request validation failed", "a payout is at least 10 EUR", "validation"),
    }
    result = run(
        "payouts", "request", "--currency", "EUR", "--amount", "5.00",
        "--destination", "x", "--key", KEY,
    )  # fmt: skip
    assert result.exit_code == 1
    assert "422 Request validation failed: a payout is at least 10 EUR" in result.output


def test_list_follows_pages_and_shows_status_and_reason(fake: FakeGateway) -> None:
    result = run("payouts", "list", "--key", KEY)
    assert result.exit_code == 0, result.output
    assert [(r.method, r.url.path) for r in fake.requests] == [("GET", "/v1/payouts")] * 2
    paid = line_with(result.stdout, "01PAYOUT ")
    for cell in ("€50.00", "IBAN DE89 ...3000", "paid", "BANK-1"):
        assert cell in paid
    assert "rejected (insufficient_seller_payable)" in line_with(result.stdout, "01PAYOUT2")
    as_json = run("payouts", "list", "--json", "--key", KEY)
    assert [p["id"] for p in json.loads(as_json.stdout)] == ["01PAYOUT", "01PAYOUT2"]
