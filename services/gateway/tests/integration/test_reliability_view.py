"""Seller reliability through the real gateway: billing's ``reliability.changed`` on
``billing.reliability`` is kept by the views' consumer (group ``gateway.reliability``) and
shown on the seller's offers; orders take ``min_reliability`` (a 422 problem for anything but a
decimal string 0..1 of at most four places) and send it on ``order.placed``."""

from __future__ import annotations

from typing import Any

import pytest

from gpux_contracts.reliability import ReliabilityChanged
from gpux_contracts.topics import BILLING_RELIABILITY, ORDERS_COMMANDS
from gpux_devinfra.testing.kafka import publish_payloads
from gpux_devinfra.testing.waiting import eventually
from gpux_platform.clock import SystemClock
from gpux_platform.problems import PROBLEM_MEDIA_TYPE

from ..reliability_events import counts, reliability_changed
from .conftest import OFFER, ORDER, RunningGateway, SignUp, commands_about

ZERO = {"ready_in_time": 0, "failed": 0, "reclaimed": 0, "rate": None}


def change(
    seller_id: str, offer_id: str, offer: tuple[int, int, int], seller: tuple[int, int, int]
) -> tuple[str, ReliabilityChanged]:
    """A ``reliability.changed`` keyed by its offer, as billing publishes it."""
    payload = reliability_changed(
        seller_id,
        offer_id,
        counts(*offer),
        counts(*seller),
        lease_id=f"{offer_id}:lease",
        as_of=SystemClock().now(),
    )
    return offer_id, payload


async def test_billings_counts_show_on_the_sellers_offers(
    gateway: RunningGateway, sign_up: SignUp
) -> None:
    seller = await sign_up(["seller"])
    async with gateway.client(seller["key"]) as client:
        made = [(await client.post("/v1/offers", json=OFFER)).json() for _ in range(2)]
        first, second = (offer["id"] for offer in made)
        assert [offer["reliability"] for offer in made] == [{"offer": ZERO, "seller": ZERO}] * 2
        await publish_payloads(
            gateway.settings,
            BILLING_RELIABILITY,
            "billing",
            [
                change(seller["id"], first, (1, 0, 0), (1, 0, 0)),
                change(seller["id"], second, (0, 1, 0), (1, 1, 0)),
                change(seller["id"], first, (1, 0, 0), (1, 0, 0)),  # late for the seller
            ],
        )

        async def listed() -> list[dict[str, Any]]:
            page: dict[str, Any] = (await client.get("/v1/offers")).json()
            return [offer["reliability"] for offer in page["items"]]

        seller_counts = {"ready_in_time": 1, "failed": 1, "reclaimed": 0, "rate": "0.5000"}
        shown = await eventually(
            listed,
            lambda records: all(r["seller"] == seller_counts for r in records),
            what="both offers showing the seller's counts",
        )
        one = (await client.get(f"/v1/offers/{second}")).json()["reliability"]
    by_id = dict(zip(sorted([first, second]), shown, strict=True))
    assert by_id[first]["offer"] == {
        "ready_in_time": 1,
        "failed": 0,
        "reclaimed": 0,
        "rate": "1.0000",
    }
    assert by_id[second]["offer"] == {
        "ready_in_time": 0,
        "failed": 1,
        "reclaimed": 0,
        "rate": "0.0000",
    }
    assert one == by_id[second]


async def test_an_orders_minimum_is_shown_and_sent_on_order_placed(
    gateway: RunningGateway, sign_up: SignUp
) -> None:
    buyer = await sign_up(["buyer"])
    async with gateway.client(buyer["key"]) as client:
        placed = await client.post("/v1/orders", json={**ORDER, "min_reliability": "0.95"})
        assert placed.status_code == 202, placed.text
        order = placed.json()
        listed = (await client.get("/v1/orders")).json()["items"]
        plain = (await client.post("/v1/orders", json=ORDER)).json()
    assert order["min_reliability"] == "0.9500"
    assert [o["min_reliability"] for o in listed if o["id"] == order["id"]] == ["0.9500"]
    assert plain["min_reliability"] is None
    (command,) = await commands_about(gateway, ORDERS_COMMANDS, "order_id", order["id"], 1.0)
    assert command["payload"]["min_reliability"] == "0.95"


@pytest.mark.parametrize("written", ["1.5", "0.12345", "-0.1", "5e-1", "0.95\n", "1.0\n", 0.5, 1])
async def test_a_minimum_that_is_no_decimal_string_0_to_1_is_a_422_problem(
    gateway: RunningGateway, sign_up: SignUp, written: object
) -> None:
    buyer = await sign_up(["buyer"])
    async with gateway.client(buyer["key"]) as client:
        refused = await client.post("/v1/orders", json={**ORDER, "min_reliability": written})
    assert refused.status_code == 422, refused.text
    assert refused.headers["content-type"].startswith(PROBLEM_MEDIA_TYPE)
    problem = refused.json()
    assert problem["detail"] == (
        "body.min_reliability: min_reliability must be a decimal string from 0 to 1 with at"
        ' most four places, e.g. "0.95"'
    )
    assert [e["loc"] for e in problem["errors"]] == [["body", "min_reliability"]]
