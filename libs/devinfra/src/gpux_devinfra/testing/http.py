"""Accounts, offers, books and polling through the public API, for tests that use only what
clients see."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from decimal import Decimal
from typing import Any

import httpx

from gpux_contracts.money import quantize, to_micros
from gpux_devinfra.testing import waiting


async def get_until(
    client: httpx.AsyncClient,
    path: str,
    check: Callable[[Any], object],
    *,
    timeout_s: float = 30,
    key: str = "",
) -> Any:
    """``GET path`` (as ``key``'s account when given) every 0.2 s until ``check(body)`` holds;
    that body. Fails after ``timeout_s`` with the last body (``eventually``)."""
    headers = auth(key) if key else {}

    async def body() -> Any:
        return (await client.get(path, headers=headers)).json()

    return await waiting.eventually(body, check, what=f"GET {path}", timeout_s=timeout_s)


eventually = get_until
"""The name services/gateway's tests still import; new code calls ``get_until``."""


async def account(client: httpx.AsyncClient, role: str) -> str:
    """Sign up an account named after its one role through the API; its API key."""
    created = await client.post("/v1/accounts", json={"name": role, "roles": [role]})
    assert created.status_code == 201, created.text
    return str(created.json()["api_key"])


def auth(key: str) -> dict[str, str]:
    """The header that authenticates a request with ``key``."""
    return {"Authorization": f"Bearer {key}"}


async def dev_top_up(
    client: httpx.AsyncClient, key: str, amount: str, currency: str
) -> list[dict[str, Any]]:
    """Credit ``key``'s wallet through a ``dev`` top-up (billing runs with dev top-ups) and wait
    until ``amount`` is available in ``currency``; the wallet's balances then."""
    body = {"amount": amount, "currency": currency, "provider": "dev"}
    made = await client.post("/v1/topups", json=body, headers=auth(key))
    assert made.status_code == 202, made.text

    def credited(wallets: dict[str, Any]) -> bool:
        return any(
            r["currency"] == currency and Decimal(r["available"]) == Decimal(amount)
            for r in wallets["items"]
        )

    balances: list[dict[str, Any]] = (
        await get_until(client, "/v1/accounts/me/balances", credited, key=key)
    )["items"]
    return balances


async def funded_buyer(client: httpx.AsyncClient, amount: str, currency: str = "EUR") -> str:
    """A new buyer (``account``) with ``amount`` of ``currency`` available (``dev_top_up``);
    its API key."""
    buyer = await account(client, "buyer")
    await dev_top_up(client, buyer, amount, currency)
    return buyer


async def released_wallet(client: httpx.AsyncClient, key: str, currency: str) -> dict[str, Any]:
    """``key``'s wallet in ``currency`` (its balances), once none of its wallets holds
    anything."""
    balances = await get_until(
        client,
        "/v1/accounts/me/balances",
        lambda wallets: all(Decimal(r["held"]) == 0 for r in wallets["items"]),
        key=key,
    )
    wallets: list[dict[str, Any]] = [r for r in balances["items"] if r["currency"] == currency]
    (wallet,) = wallets
    return wallet


def micros(amount: str) -> int:
    """An amount as the API writes it, in integer micro-units (as the ledger books it)."""
    return to_micros(quantize(Decimal(amount)))


def seconds_between(start: str, end: str) -> int:
    """Whole seconds from the API's instant ``start`` to ``end`` (a started second is not
    billed)."""
    delta = datetime.fromisoformat(end) - datetime.fromisoformat(start)
    return delta.days * 86_400 + delta.seconds


FINAL_ORDER_STATUSES = frozenset({"filled", "cancelled", "expired", "rejected"})
"""The statuses an order ends in."""


async def final_order(client: httpx.AsyncClient, key: str, body: dict[str, Any]) -> dict[str, Any]:
    """Place the order ``body`` as ``key``'s buyer (202) and wait until it is final; the order
    then."""
    made = await client.post("/v1/orders", json=body, headers=auth(key))
    assert made.status_code == 202, made.text
    order: dict[str, Any] = await get_until(
        client,
        f"/v1/orders/{made.json()['id']}",
        lambda o: o["status"] in FINAL_ORDER_STATUSES,
        key=key,
    )
    return order


async def leased_for_an_hour(
    client: httpx.AsyncClient, gpu: str, gpus: int, price: str, top_up: str
) -> tuple[str, str, str]:
    """A new seller's live hourly offer of ``gpus`` at ``price`` EUR, and a new buyer with
    ``top_up`` EUR whose limit order at that price for an hour of them all filled (IOC); the
    seller's and the buyer's keys and the order's id."""
    seller = await account(client, "seller")
    offer = await push_offer(client, seller, offer_body(price, "EUR", gpus, gpu=gpu))
    await get_until(
        client, f"/v1/offers/{offer['id']}", lambda o: o["status"] == "live", key=seller
    )
    buyer = await funded_buyer(client, top_up)
    body = {
        "gpu": gpu, "gpus": gpus, "type": "limit", "max_price_per_gpu_hour": price,
        "currency": "EUR", "tier": "on_demand", "time_in_force": "ioc", "hours": 1,
    }  # fmt: skip
    order = await final_order(client, buyer, body)
    assert order["status"] == "filled", order
    return seller, buyer, str(order["id"])


THREE_CURRENCIES: tuple[tuple[str, str, int], ...] = (
    ("0.40", "USD", 4),  # 0.368 EUR
    ("0.35", "EUR", 2),  # 0.35 EUR  <- cheapest in reference terms
    ("0.30", "GBP", 8),  # 0.354 EUR
)
"""Three offers ``(price, currency, gpus)`` whose order in EUR differs from their order as
numbers, at the default FX file (1 USD = 0.92 EUR, 1 GBP = 1.18 EUR)."""
THREE_CURRENCIES_IN_EUR = [("0.35", 2), ("0.354", 8), ("0.368", 4)]
"""The depth ``(price, gpus)`` those three make in EUR, best first."""


def offer_body(
    price: str, currency: str, gpus: int, *, gpu: str = "rtx-4090", **extra: Any
) -> dict[str, Any]:
    """A ``POST /v1/offers`` body: on-demand, billed by the hour and ready at the lease's start
    (provisioning timeout 0: charged from the trade, as before the delivery issue) unless
    ``extra`` says otherwise."""
    return {
        "gpu": gpu,
        "gpus": gpus,
        "price_per_gpu_hour": price,
        "currency": currency,
        "tier": "on_demand",
        "billing": "hour",
        "provisioning_timeout_seconds": 0,
        **extra,
    }


async def push_offer(client: httpx.AsyncClient, key: str, body: dict[str, Any]) -> dict[str, Any]:
    """Offer ``body`` as ``key``'s seller; the offer as the gateway took it (202)."""
    made = await client.post("/v1/offers", json=body, headers=auth(key))
    assert made.status_code == 202, made.text
    offer: dict[str, Any] = made.json()
    return offer


async def sell(client: httpx.AsyncClient, body: dict[str, Any]) -> dict[str, Any]:
    """A new seller signs up and offers ``body``; the offer as the gateway took it (202), with
    the seller's API key (``key``) and account id (``seller_id``)."""
    created = await client.post("/v1/accounts", json={"name": "seller", "roles": ["seller"]})
    assert created.status_code == 201, created.text
    signed = created.json()
    offer = await push_offer(client, signed["api_key"], body)
    return {**offer, "key": signed["api_key"], "seller_id": signed["account"]["id"]}


async def offer_becomes(
    client: httpx.AsyncClient, offer: dict[str, Any], status: str
) -> dict[str, Any]:
    """``offer`` (as ``sell`` returns it) as its seller sees it, once it has ``status``."""
    path = f"/v1/offers/{offer['id']}"
    seen: dict[str, Any] = await get_until(
        client, path, lambda b: b["status"] == status, key=offer["key"]
    )
    return seen


async def sell_three_currencies(client: httpx.AsyncClient, status: str) -> list[dict[str, Any]]:
    """One seller per offer of ``THREE_CURRENCIES`` (``sell``); each offer once it has
    ``status``."""
    offers = [await sell(client, offer_body(*offer)) for offer in THREE_CURRENCIES]
    for offer in offers:
        await offer_becomes(client, offer, status)
    return offers


async def ranked_three_currencies(
    client: httpx.AsyncClient, path: str, offers: list[dict[str, Any]]
) -> dict[str, Any]:
    """Wait until the on-demand book of ``GET path`` (in EUR) ranks the offers
    ``sell_three_currencies`` made as ``THREE_CURRENCIES_IN_EUR``, the EUR one best (0.35 for
    2 GPUs); that book."""
    book = await ranked(client, path, offers[1]["id"], THREE_CURRENCIES_IN_EUR)
    assert book["best_ask"]["price"] == "0.35"
    assert book["best_ask"]["gpus"] == 2
    return book


def book_in(prices: dict[str, Any], tier: str = "on_demand", region: str = "*") -> dict[str, Any]:
    """The book of ``tier`` in ``region`` of a ``GET /v1/prices/{gpu}`` answer (it must be
    there)."""
    found = find_book(prices, tier, region)
    assert found is not None, f"no {tier} book in {region}: {prices}"
    return found


def best_offer_id(prices: dict[str, Any]) -> str | None:
    """The offer at the best ask of the on-demand book of every region, if there is one."""
    book = find_book(prices)
    return book["best_ask"]["offer_id"] if book and book["best_ask"] else None


async def ranked(
    client: httpx.AsyncClient, path: str, best: str, depth: list[tuple[str, int]]
) -> dict[str, Any]:
    """Wait until the on-demand book of ``GET path`` has offer ``best`` at its best ask and
    ``depth`` as its ``(price, gpus)`` levels; that book."""

    def levels(prices: dict[str, Any]) -> list[tuple[str, int]]:
        return [(level["price"], level["gpus"]) for level in book_in(prices)["depth"]]

    prices = await get_until(
        client, path, lambda b: best_offer_id(b) == best and levels(b) == depth
    )
    return book_in(prices)


def find_book(
    prices: dict[str, Any], tier: str = "on_demand", region: str = "*"
) -> dict[str, Any] | None:
    """The book of ``tier`` in ``region`` of a ``GET /v1/prices/{gpu}`` answer, if listed."""
    for item in prices["items"]:
        if item["tier"] == tier and item["region"] == region:
            book: dict[str, Any] = item
            return book
    return None
