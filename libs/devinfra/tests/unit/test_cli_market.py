"""`gpux prices`, `offer`, `order`, `orders`, `balance`, `topup`, against a fake transport.

The fake records every request (method, path, query, JSON body, Authorization) and answers
with the shapes docs/API.md documents, which the SDK's models read (a field they require and
the fake lacks fails the command); money is sent as a decimal string, shown to its currency's
precision (en_US unless a test says otherwise) and kept raw by --json.
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
from gpux_devinfra.testing.market import OFFER, ORDER, STAMP

pytestmark = pytest.mark.unit

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
                "seller_reliability": None,
            },
            "depth": [{"price": "0.3712", "gpus": 8, "reliability": None, "min_reliability": None}],
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

BALANCES = {"items": [{"currency": "EUR", "available": "100.000000", "held": "2.50"}]}


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


def _book(request: httpx.Request) -> dict[str, object]:
    return {
        "gpu": "rtx-4090",
        "tier": request.url.params["tier"],
        "currency": request.url.params["currency"],
        "bids": [
            {"price": "0.38", "gpus": 4, "orders": 2},
            {"price": "0.351234", "gpus": 1, "orders": 1},
        ],
        "asks": [{"price": "0.40", "gpus": 8, "orders": 1}],
        "depth": 20,
        "sequence": 42,
        "as_of": STAMP,
    }


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
    ("DELETE", "/v1/orders/01ORDER"): answer(202, {**ORDER, "status": "open"}),
    ("PATCH", "/v1/offers/01OFFER"): lambda r: httpx.Response(
        202, json={**OFFER, "status": "live"}
    ),
    ("GET", "/v1/orderbook/rtx-4090"): lambda r: httpx.Response(200, json=_book(r)),
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
    for cell in ("on_demand", "eu-west", "€0.37", "8"):  # 0.3712 EUR to the cent
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
    assert "$0.40" in row
    assert "pending" in row
    assert fake.last.headers["idempotency-key"]


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
    assert "$0.25" in row


def test_offer_list_shows_each_offers_delivery_record(fake: FakeGateway) -> None:
    counted = {"ready_in_time": 19, "failed": 1, "reclaimed": 0, "rate": "0.9500"}
    fresh = {**OFFER, "id": "01FRESH"}
    rated = {**OFFER, "id": "01RATED", "reliability": {"offer": counted, "seller": counted}}
    fake.routes[("GET", "/v1/offers")] = lambda _: httpx.Response(
        200, json={"items": [rated, fresh], "next_cursor": None}
    )
    result = run("offer", "list", "--key", KEY)
    assert result.exit_code == 0, result.output
    assert "19/20 ready (95.00 %)" in line_with(result.stdout, "01RATED")
    assert "ready" not in line_with(result.stdout, "01FRESH")


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
    assert fake.last.headers["idempotency-key"] == "withdraw-01OFFER"
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
    first_key = fake.last.headers["idempotency-key"]
    run(*args, "--currency", "USD", "--hours", "3", "--key", KEY)
    assert fake.last.headers["idempotency-key"] != first_key  # a new order each run


def test_order_buy_rebuy_on_interruption(fake: FakeGateway) -> None:
    args = ["order", "buy", "--gpu", "rtx-4090", "--gpus", "2", "--limit", "0.30"]
    result = run(*args, "--currency", "USD", "--tier", "interruptible", "--rebuy", "--key", KEY)
    assert result.exit_code == 0, result.output
    assert fake.body()["rebuy_on_interruption"] is True
    plain = run(*args, "--currency", "USD", "--key", KEY)
    assert "rebuy_on_interruption" not in fake.body(), plain.output


def test_order_buy_asks_a_minimum_reliability(fake: FakeGateway) -> None:
    args = ["order", "buy", "--gpu", "rtx-4090", "--gpus", "2", "--limit", "0.30"]
    result = run(*args, "--currency", "USD", "--min-reliability", "0.95", "--key", KEY)
    assert result.exit_code == 0, result.output
    assert fake.body()["min_reliability"] == "0.95"
    plain = run(*args, "--currency", "USD", "--key", KEY)
    assert "min_reliability" not in fake.body(), plain.output
    sent = len(fake.requests)
    bad = run(*args, "--currency", "USD", "--min-reliability", "high", "--key", KEY)
    assert bad.exit_code == 2
    assert len(fake.requests) == sent  # refused before anything is sent


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
    for cell in ("limit", "$0.45", "any", "3", "pending_funds"):
        assert cell in first
    assert "rejected (insufficient_funds, short $1.35)" in line_with(result.stdout, "01ORDER2")


def test_balance_table_and_json(fake: FakeGateway) -> None:
    result = run("balance", "--key", KEY)
    assert result.exit_code == 0, result.output
    assert (fake.last.method, fake.last.url.path) == ("GET", "/v1/accounts/me/balances")
    eur = line_with(result.stdout, "EUR")
    assert "€100.00" in eur
    assert "€2.50" in eur
    as_json = run("balance", "--json", "--key", KEY)
    assert json.loads(as_json.stdout) == BALANCES["items"]  # the raw amounts


def test_topup_sends_amount_currency_and_provider(fake: FakeGateway) -> None:
    result = run("topup", "100.00", "eur", "--provider", "dev", "--key", KEY)
    assert result.exit_code == 0, result.output
    assert fake.sent() == ("POST", "/v1/topups", f"Bearer {KEY}")
    assert fake.body() == {"amount": "100.00", "currency": "EUR", "provider": "dev"}
    assert fake.last.headers["idempotency-key"]
    assert result.stdout.strip() == "top-up 01TOPUP: €100.00 requested (dev)"
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
    assert result.stderr.strip().startswith("gpux: this command needs an API key:")
    assert "--key or GPUX_API_KEY" in result.stderr
    assert fake.requests == []


def test_prices_in_another_locale_and_a_currency_the_api_lacks(fake: FakeGateway) -> None:
    german = run("prices", "--currency", "EUR", env={"GPUX_LOCALE": "de_DE"})
    assert german.exit_code == 0, german.output
    assert "0,37\u00a0€" in line_with(german.stdout, "rtx-4090")  # babel's no-break space
    swiss = run("--locale", "de_CH", "prices", "--currency", "EUR")
    assert "EUR\u00a00.37" in line_with(swiss.stdout, "rtx-4090")
    sent = len(fake.requests)
    assert run("--locale", "xx_YY", "prices").exit_code == 2
    assert run("prices", "--currency", "JPY").exit_code == 2
    assert len(fake.requests) == sent  # refused before anything is sent


def test_book_shows_bids_and_asks_side_by_side_without_auth(fake: FakeGateway) -> None:
    result = run("book", "rtx-4090", "--tier", "on_demand", "--currency", "usd")
    assert result.exit_code == 0, result.output
    request = fake.last
    assert (request.method, request.url.path) == ("GET", "/v1/orderbook/rtx-4090")
    assert dict(request.url.params) == {"tier": "on_demand", "currency": "USD"}
    assert "authorization" not in request.headers
    best = line_with(result.stdout, "$0.38")
    assert best.split() == ["2", "4", "$0.38", "$0.40", "8", "1"]  # best bid beside best ask
    assert line_with(result.stdout, "$0.35").split() == ["1", "1", "$0.35"]  # no ask beside it
    as_json = json.loads(run("book", "rtx-4090", "--json").stdout)
    assert as_json["bids"][1]["price"] == "0.351234"


def test_book_of_an_unknown_gpu_is_one_line(fake: FakeGateway) -> None:
    result = run("book", "rtx-9999")
    assert result.exit_code == 1
    assert result.stderr.strip() == "gpux: 404 Not found: no"


def test_order_cancel_deletes_the_order_once(fake: FakeGateway) -> None:
    result = run("order", "cancel", "01ORDER", "--key", KEY)
    assert result.exit_code == 0, result.output
    assert fake.sent() == ("DELETE", "/v1/orders/01ORDER", f"Bearer {KEY}")
    assert fake.last.headers["idempotency-key"] == "cancel-01ORDER"  # a retry is the same act
    assert result.stdout.strip() == "order 01ORDER: cancellation requested (open)"
    as_json = run("order", "cancel", "01ORDER", "--key", KEY, "--json")
    assert json.loads(as_json.stdout)["status"] == "open"


def test_order_cancel_of_a_final_order_is_the_apis_problem(fake: FakeGateway) -> None:
    fake.problem = problem(409, "Conflict", "order 01ORDER is filled", "order-final")
    result = run("order", "cancel", "01ORDER", "--key", KEY)
    assert result.exit_code == 1
    assert result.stderr.strip() == "gpux: 409 Conflict: order 01ORDER is filled"


def test_offer_update_sends_only_what_changes(fake: FakeGateway) -> None:
    result = run("offer", "update", "01OFFER", "--price", "0.35", "--gpus", "6", "--key", KEY)
    assert result.exit_code == 0, result.output
    assert fake.sent() == ("PATCH", "/v1/offers/01OFFER", f"Bearer {KEY}")
    assert fake.body() == {"price_per_gpu_hour": "0.35", "gpus": 6}
    assert fake.last.headers["idempotency-key"]
    assert result.stdout.strip() == "offer 01OFFER: change requested (status live)"
    run("offer", "update", "01OFFER", "--interruptible-price", "0.20", "--key", KEY)
    assert fake.body() == {"interruptible_price_per_gpu_hour": "0.20"}


@pytest.mark.parametrize("change", [[], ["--price", "1e3"], ["--gpus", "0"]])
def test_offer_update_refuses_no_change_or_a_bad_one(fake: FakeGateway, change: list[str]) -> None:
    result = run("offer", "update", "01OFFER", *change, "--key", KEY)
    assert result.exit_code == 2
    assert fake.requests == []


OFFER_PUSH = ["offer", "push", "--gpu", "rtx-4090", "--gpus", "8", "--price", "0.40"]
OFFER_PUSH += ["--currency", "USD", "--tier", "on_demand", "--billing", "hour"]
ORDER_BUY = ["order", "buy", "--gpu", "rtx-4090", "--gpus", "2", "--currency", "USD"]
ORDER_BUY += ["--limit", "0.45"]
TOPUP = ["topup", "100.00", "EUR"]


@pytest.mark.parametrize("write", [OFFER_PUSH, ORDER_BUY, TOPUP], ids=["offer", "order", "topup"])
def test_a_write_sends_the_idempotency_key_given(fake: FakeGateway, write: list[str]) -> None:
    result = run(*write, "--idempotency-key", "retry-me-1", "--key", KEY)
    assert result.exit_code == 0, result.output
    assert fake.last.method == "POST"
    assert fake.last.headers["idempotency-key"] == "retry-me-1"


@pytest.mark.parametrize("write", [OFFER_PUSH, ORDER_BUY, TOPUP], ids=["offer", "order", "topup"])
def test_a_write_the_gateway_was_too_busy_for_says_how_to_send_it_again(
    fake: FakeGateway, write: list[str]
) -> None:
    fake.problem = {"title": "Service unavailable", "status": 503, "detail": "writes paused"}
    result = run(*write, "--key", KEY)
    assert result.exit_code == 1
    keys = {r.headers["idempotency-key"] for r in fake.requests}
    assert len(fake.requests) > 1  # tried again...
    assert len(keys) == 1  # ...with the same key
    assert result.stderr.strip() == (
        "gpux: 503 Service unavailable: writes paused; run it again with --idempotency-key"
        f" {keys.pop()}: it is done at most once"
    )
