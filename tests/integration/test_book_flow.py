"""Offers through the real chain: gateway → pricing → matching → pricing → gateway.

Sellers offer GPUs in three currencies; the matching service puts them on the book (`live`),
pricing ranks them in EUR, and withdrawals and expiries move the best ask.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta

import pytest

from gpux_catalog.bootstrap import SPEC as CATALOG
from gpux_devinfra.testing.http import (
    auth,
    best_offer_id,
    book_in,
    get_until,
    offer_becomes,
    offer_body,
    ranked_three_currencies,
    sell,
    sell_three_currencies,
)
from gpux_devinfra.testing.services import Running, stack
from gpux_gateway.bootstrap import SPEC as GATEWAY
from gpux_matching.bootstrap import SPEC as MATCHING
from gpux_platform.clock import SystemClock
from gpux_platform.settings import GpuxSettings
from gpux_pricing.bootstrap import SPEC as PRICING

EUR = "/v1/prices/rtx-4090?currency=EUR"


@pytest.fixture(scope="module")
async def gateway(module_settings: GpuxSettings) -> AsyncIterator[Running]:
    """Catalog, pricing, matching (offers expire within the test) and the gateway."""
    async with stack(module_settings, CATALOG, PRICING, MATCHING, GATEWAY) as services:
        yield services["gateway"]


async def test_book_reports_live_and_best_ask_moves_on_withdrawal_and_expiry(
    gateway: Running,
) -> None:
    async with gateway.client() as client:
        offers = await sell_three_currencies(client, "live")
        await ranked_three_currencies(client, EUR, offers)

        # The cheapest is withdrawn: the GBP offer (0.354 EUR) becomes the best ask.
        deleted = await client.delete(
            f"/v1/offers/{offers[1]['id']}", headers=auth(offers[1]["key"])
        )
        assert deleted.status_code == 202, deleted.text
        await offer_becomes(client, offers[1], "withdrawn")
        body = await get_until(client, EUR, lambda b: best_offer_id(b) == offers[2]["id"])
        assert book_in(body)["best_ask"]["price"] == "0.354"

        # A cheaper offer for ~3 s: it expires by itself and leaves the best ask.
        until = (SystemClock().now() + timedelta(seconds=3)).isoformat()
        short = await sell(client, offer_body("0.20", "EUR", 1, available_until=until))
        await offer_becomes(client, short, "expired")
        body = await get_until(client, EUR, lambda b: best_offer_id(b) == offers[2]["id"])
        book = book_in(body)
        assert best_offer_id(body) == offers[2]["id"]
        assert [(lvl["price"], lvl["gpus"]) for lvl in book["depth"]] == [
            ("0.354", 8),
            ("0.368", 4),
        ]
