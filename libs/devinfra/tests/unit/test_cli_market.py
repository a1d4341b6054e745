"""`gpux prices`, `offer`, `order`, `orders`, `balance`, `topup`, against a fake transport.

The fake records every request (method, path, query, JSON body, Authorization) and answers
with the shapes docs/API.md documents; money stays a decimal string both ways.
"""

from __future__ import annotations

import json

import httpx
import pytest

from gpux_devinfra.testing.cli import (
    KEY,
    FakeGateway,
    answer,
    line_with,
    problem,
    run,
    use_transport,
)

pytestmark = pytest.mark.unit

STAMP = "2025-01-01T00:00:00Z"

PRICES = {
    "items": [
        {
            "gpu": "rtx-4090",
            "tier": "on_demand",
            "region": "eu-west",
            "currency": "EUR",
            "best_ask": {
                "offer_id": "01OFFER",
                "price": "0.3712",
                "currency": "EUR",
                "offered_price": "0.40",
                "offered_currency": "USD",
                "gpus": 8,
            },
            "depth": [{"price": "0.3712", "gpus": 8}],
            "as_of": STAMP,
        },
        {
            "gpu": "h100-sxm",
            "tier": "interruptible",
            "region": "us-east",
            "currency": "EUR",
            "best_ask": None,
            "depth": [],
            "as_of": STAMP,
        },
    ]
}

OFFER = {
    "id": "01OFFER",
    "gpu": "rtx-4090",
    "gpus": 8,
    "remaining_gpus": 8,
    "price_per_gpu_hour": "0.40",
    "currency": "USD",
    "tier": "on_demand",
    "billing": "hour",
    "region": None,
    "min_hours": None,
    "available_until": None,
    "status": "pending",
    "reason": None,
    "created_at": STAMP,
    "updated_at": STAMP,
}

ORDER = {
    "id": "01ORDER",
    "gpu": "rtx-4090",
    "gpus": 2,
    "filled_gpus": 0,
    "remaining_gpus": 2,
    "type": "limit",
    "max_price_per_gpu_hour": "0.45",
    "currency": "USD",
    "tier": "any",
    "region": None,
    "hours": 3,
    "time_in_force": "gtc",
    "expires_at": None,
    "status": "pending_funds",
    "reason": None,
    "shortfall": None,
    "shortfall_currency": None,
    "created_at": STAMP,
    "updated_at": STAMP,
}

BALANCES = [{"currency": "EUR", "available": "100.000000", "held": "2.50"}]


def _offers(request: httpx.Request) -> httpx.Response:
    if request.url.params.get("cursor") == "page2":
        second = {**OFFER, "id": "01OFFER2", "status": "live"}
        return httpx.Response(200, json={"items": [second], "next_cursor": None})
    return httpx.Response(200, json={"items": [OFFER], "next_cursor": "page2"})


def _topup(request: httpx.Request) -> httpx.Response:
    sent = json.loads(request.content)
    return httpx.Response(
        202, json={"topup_id": "01TOPUP", "account_id": "01ACC", "status": "requested", **sent}
    )


REJECTED = {
    **ORDER,
    "id": "01ORDER2",
    "status": "rejected",
    "reason": "insufficient_funds",
    "shortfall": "1.35",
    "shortfall_currency": "USD",
}

ROUTES = {
    ("GET", "/v1/prices"): answer(200, PRICES),
    ("POST", "/v1/offers"): lambda r: httpx.Response(202, json={**OFFER, **json.loads(r.content)}),
    ("GET", "/v1/offers"): _offers,
    ("DELETE", "/v1/offers/01OFFER"): answer(202, {**OFFER, "status": "live"}),
    ("POST", "/v1/orders"): lambda r: httpx.Response(202, json={**ORDER, **json.loads(r.content)}),
    ("GET", "/v1/orders"): answer(200, {"items": [ORDER, REJECTED], "next_cursor": None}),
    ("GET", "/v1/accounts/me/balances"): answer(200, BALANCES),
    ("POST", "/v1/topups"): _topup,
}
"""The market endpoints, answered with the shapes docs/API.md documents."""


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> FakeGateway:
    gateway = FakeGateway(ROUTES)
    use_transport(monkeypatch, gateway)
    return gateway


def test_prices_table_shows_best_ask_and_depth_without_auth(fake: FakeGateway) -> None:
    result = run("prices", "--currency", "eur")
    assert result.exit_code == 0, result.output
    request = fake.last
    assert (request.method, request.url.path) == ("GET", "/v1/prices")
    assert request.url.params["currency"] == "EUR"
    assert "authorization" not in request.headers
    rtx = line_with(result.stdout, "rtx-4090")
    for cell in ("on_demand", "eu-west", "0.3712 EUR", "8"):
        assert cell in rtx
    assert "—" in line_with(result.stdout, "h100-sxm")


def test_prices_json_keeps_prices_as_decimal_strings(fake: FakeGateway) -> None:
    result = run("prices", "--json", env={"GPUX_API_URL": "http://gw.example:9000"})
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)[0]["best_ask"]["price"] == "0.3712"
    assert fake.last.url.host == "gw.example"
    assert fake.last.url.params["currency"] == "USD"


def test_offer_push_sends_the_offer_with_the_key(fake: FakeGateway) -> None:
    args = ["offer", "push", "--gpu", "rtx-4090", "--gpus", "8", "--price", "0.40"]
    result = run(
        *args, "--currency", "usd", "--tier", "on_demand", "--billing", "hour", "--key", KEY
    )
    assert result.exit_code == 0, result.output
    assert fake.sent() == ("POST", "/v1/offers", f"Bearer {KEY}")
    assert fake.body() == {
        "gpu": "rtx-4090",
        "gpus": 8,
        "price_per_gpu_hour": "0.40",
        "currency": "USD",
        "tier": "on_demand",
        "billing": "hour",
        "provisioning_timeout_seconds": 600,  # the API's default, sent as such
    }
    row = line_with(result.stdout, "01OFFER")
    assert "0.40 USD" in row
    assert "pending" in row


def test_offer_push_with_an_interruptible_price_and_a_notice(fake: FakeGateway) -> None:
    args = ["offer", "push", "--gpu", "rtx-4090", "--gpus", "8", "--price", "0.40"]
    args += ["--currency", "USD", "--tier", "on_demand", "--billing", "second", "--key", KEY]
    result = run(*args, "--interruptible-price", "0.25", "--notice", "300")
    assert result.exit_code == 0, result.output
    body = fake.body()
    assert body["interruptible_price_per_gpu_hour"] == "0.25"
    assert body["interruption_notice_seconds"] == 300
    short = run(*args, "--notice", "30")
    assert short.exit_code == 2


def test_offer_push_with_a_provisioning_timeout(fake: FakeGateway) -> None:
    args = ["offer", "push", "--gpu", "rtx-4090", "--gpus", "8", "--price", "0.40"]
    args += ["--currency", "USD", "--tier", "on_demand", "--billing", "hour", "--key", KEY]
    ready = run(*args, "--provisioning-timeout", "0")
    assert ready.exit_code == 0, ready.output
    assert fake.body()["provisioning_timeout_seconds"] == 0
    slow = run(*args, "--provisioning-timeout", "1800")
    assert slow.exit_code == 0, slow.output
    assert fake.body()["provisioning_timeout_seconds"] == 1800
    sent = fake.body()
    for seconds in ("30", "86401", "-1"):
        refused = run(*args, "--provisioning-timeout", seconds)
        assert refused.exit_code == 2, refused.output
    assert fake.body() == sent  # nothing sent for a refused timeout


def test_offer_list_shows_capacity_free_leased_and_both_prices(fake: FakeGateway) -> None:
    fake.routes[("GET", "/v1/offers")] = lambda _: httpx.Response(
        200,
        json={
            "items": [
                {
                    **OFFER,
                    "status": "live",
                    "capacity_gpus": 8,
                    "leased_gpus": 3,
                    "remaining_gpus": 5,
                    "interruptible_price_per_gpu_hour": "0.25",
                }
            ],
            "next_cursor": None,
        },
    )
    result = run("offer", "list", "--key", KEY)
    assert result.exit_code == 0, result.output
    row = line_with(result.stdout, "01OFFER")
    assert row.split()[2:5] == ["8", "5", "3"]
    assert "0.25 USD" in row


def test_offer_push_refuses_a_price_that_is_not_a_decimal(fake: FakeGateway) -> None:
    args = ["offer", "push", "--gpu", "rtx-4090", "--gpus", "1", "--price", "1e3"]
    args += ["--currency", "USD", "--tier", "on_demand", "--billing", "hour", "--key", KEY]
    result = run(*args)
    assert result.exit_code == 2
    assert fake.requests == []


def test_offer_list_follows_pages_and_the_key_comes_from_the_environment(
    fake: FakeGateway,
) -> None:
    result = run("offer", "list", env={"GPUX_API_KEY": KEY})
    assert result.exit_code == 0, result.output
    assert [r.url.params.get("cursor") for r in fake.requests] == [None, "page2"]
    assert all(r.headers["authorization"] == f"Bearer {KEY}" for r in fake.requests)
    assert "01OFFER2" in result.stdout
    assert "live" in line_with(result.stdout, "01OFFER2")

    as_json = run("offer", "list", "--json", env={"GPUX_API_KEY": KEY})
    assert [o["id"] for o in json.loads(as_json.stdout)] == ["01OFFER", "01OFFER2"]


def test_offer_withdraw_deletes_the_offer(fake: FakeGateway) -> None:
    result = run("offer", "withdraw", "01OFFER", "--key", KEY)
    assert result.exit_code == 0, result.output
    assert fake.sent() == ("DELETE", "/v1/offers/01OFFER", f"Bearer {KEY}")
    assert "01OFFER: withdrawal requested" in result.stdout


def test_order_buy_limit_sends_the_order(fake: FakeGateway) -> None:
    args = ["order", "buy", "--gpu", "rtx-4090", "--gpus", "2", "--limit", "0.45"]
    result = run(*args, "--currency", "USD", "--hours", "3", "--key", KEY)
    assert result.exit_code == 0, result.output
    assert fake.sent() == ("POST", "/v1/orders", f"Bearer {KEY}")
    assert fake.body() == {
        "gpu": "rtx-4090",
        "gpus": 2,
        "type": "limit",
        "currency": "USD",
        "tier": "any",
        "max_price_per_gpu_hour": "0.45",
        "hours": 3,
    }
    assert result.stdout.strip() == "order 01ORDER: pending_funds"


def test_order_buy_rebuy_on_interruption(fake: FakeGateway) -> None:
    args = ["order", "buy", "--gpu", "rtx-4090", "--gpus", "2", "--limit", "0.30"]
    result = run(*args, "--currency", "USD", "--tier", "interruptible", "--rebuy", "--key", KEY)
    assert result.exit_code == 0, result.output
    assert fake.body()["rebuy_on_interruption"] is True
    plain = run(*args, "--currency", "USD", "--key", KEY)
    assert "rebuy_on_interruption" not in fake.body(), plain.output


def test_order_buy_market_with_a_cap_json(fake: FakeGateway) -> None:
    args = ["order", "buy", "--gpu", "rtx-4090", "--gpus", "4", "--market", "--cap", "0.50"]
    result = run(*args, "--currency", "EUR", "--tier", "interruptible", "--json", "--key", KEY)
    assert result.exit_code == 0, result.output
    assert fake.body() == {
        "gpu": "rtx-4090",
        "gpus": 4,
        "type": "market",
        "currency": "EUR",
        "tier": "interruptible",
        "max_price_per_gpu_hour": "0.50",
    }
    assert json.loads(result.stdout)["max_price_per_gpu_hour"] == "0.50"


@pytest.mark.parametrize(
    "prices",
    [
        [],
        ["--market", "--limit", "0.4"],
        ["--limit", "0.4", "--cap", "0.5"],
    ],
)
def test_order_buy_needs_exactly_one_of_market_or_limit(
    fake: FakeGateway, prices: list[str]
) -> None:
    args = ["order", "buy", "--gpu", "rtx-4090", "--gpus", "1", "--currency", "USD"]
    result = run(*args, *prices, "--key", KEY)
    assert result.exit_code == 2
    assert fake.requests == []


def test_orders_table_shows_the_reason_and_shortfall(fake: FakeGateway) -> None:
    result = run("orders", "--key", KEY)
    assert result.exit_code == 0, result.output
    assert fake.sent() == ("GET", "/v1/orders", f"Bearer {KEY}")
    first = line_with(result.stdout, "01ORDER ")
    for cell in ("limit", "0.45 USD", "any", "3", "pending_funds"):
        assert cell in first
    assert "rejected (insufficient_funds, short 1.35 USD)" in line_with(result.stdout, "01ORDER2")


def test_balance_table_and_json(fake: FakeGateway) -> None:
    result = run("balance", "--key", KEY)
    assert result.exit_code == 0, result.output
    assert (fake.last.method, fake.last.url.path) == ("GET", "/v1/accounts/me/balances")
    eur = line_with(result.stdout, "EUR")
    assert "100.000000" in eur
    assert "2.50" in eur
    as_json = run("balance", "--json", "--key", KEY)
    assert json.loads(as_json.stdout) == BALANCES


def test_topup_sends_amount_currency_and_provider(fake: FakeGateway) -> None:
    result = run("topup", "100.00", "eur", "--provider", "dev", "--key", KEY)
    assert result.exit_code == 0, result.output
    assert fake.sent() == ("POST", "/v1/topups", f"Bearer {KEY}")
    assert fake.body() == {"amount": "100.00", "currency": "EUR", "provider": "dev"}
    assert result.stdout.strip() == "top-up 01TOPUP: 100.00 EUR requested (dev)"
    run("topup", "5", "USD", "--key", KEY)
    assert fake.body()["provider"] == "manual"


def test_a_problem_answer_is_one_line_on_stderr(fake: FakeGateway) -> None:
    detail = "price_per_gpu_hour: at most 4 decimals"
    fake.problem = problem(422, "Request validation failed", detail, "validation")
    args = ["offer", "push", "--gpu", "rtx-4090", "--gpus", "1", "--price", "0.123456"]
    result = run(
        *args, "--currency", "USD", "--tier", "on_demand", "--billing", "second", "--key", KEY
    )
    assert result.exit_code == 1
    assert result.stderr.strip().splitlines() == [
        "gpux: 422 Request validation failed: price_per_gpu_hour: at most 4 decimals"
    ]
    assert result.stdout == ""


def test_a_protected_command_without_a_key_says_so(fake: FakeGateway) -> None:
    result = run("balance", env={"GPUX_API_KEY": ""})
    assert result.exit_code == 1
    assert result.stderr.strip() == "gpux: this command needs an API key: --key or GPUX_API_KEY"
    assert fake.requests == []
