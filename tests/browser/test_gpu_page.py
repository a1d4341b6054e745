"""A GPU's page against the real exchange: specs, the candlestick chart with volume from the
OHLC history (after real trades), each tier's order book with both sides; its basics and its
screenshots at desktop and phone width."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from playwright.async_api import Page, expect

from .exchange_api import Api
from .pages import Pages, assert_basics, assert_fits_the_width, screenshot

pytestmark = pytest.mark.e2e

GPU = "a100-sxm-80gb"
LIVE_S = 30_000
FINAL = {"filled", "cancelled", "expired", "rejected"}
CANDLES = re.compile(r"^[12]$")


@pytest.fixture(scope="module")
async def traded(exchange: str) -> AsyncIterator[None]:
    """Offers in both tiers, two trades (candles), and a resting bid (the book's bid side)."""
    seller = await Api.sign_up(exchange, "Chart GPU Farm", ["seller"])
    buyer = await Api.sign_up(exchange, "Chart Buyer", ["buyer"])
    await seller.offer(GPU, "1.79", gpus=8)
    await seller.offer(GPU, "1.99", gpus=8)
    await seller.offer(GPU, "0.99", gpus=4, tier="interruptible")
    await buyer.call(
        "POST", "/v1/topups", json={"amount": "100", "currency": "USD", "provider": "dev"}
    )
    await buyer.until(
        "/v1/accounts/me/balances", lambda b: any(w["currency"] == "USD" for w in b["items"])
    )
    # 1 and 2 GPUs at 1.79, then 6: the last 5 at 1.79 and 1 at 1.99 (one candle that rose).
    for gpus in (1, 2, 6):
        order = await buyer.call("POST", "/v1/orders", json={
            "gpu": GPU, "gpus": gpus, "type": "market", "max_price_per_gpu_hour": "2.50",
            "currency": "USD", "tier": "on_demand", "time_in_force": "ioc",
        })  # fmt: skip
        done = await buyer.until(f"/v1/orders/{order['id']}", lambda o: o["status"] in FINAL)
        assert done["status"] == "filled", done
    await buyer.call("POST", "/v1/orders", json={
        "gpu": GPU, "gpus": 1, "type": "limit", "max_price_per_gpu_hour": "1.20",
        "currency": "USD", "tier": "on_demand", "time_in_force": "gtc",
    })  # fmt: skip
    history = f"/v1/prices/{GPU}/history?interval=1m&tier=on_demand&currency=USD"
    await buyer.until(history, lambda h: sum(c["gpus"] for c in h["candles"]) == 9)
    await buyer.until(f"/v1/orderbook/{GPU}?tier=on_demand", lambda b: len(b["bids"]) == 1)
    yield
    await seller.close()
    await buyer.close()


async def chart_and_depth(page: Page) -> None:
    chart = page.locator(".chart")
    # One candle, or two if the trades straddled the interval's boundary.
    await expect(chart).to_have_attribute("data-candles", CANDLES, timeout=LIVE_S)
    assert await chart.locator("canvas").count() >= 1
    on_demand = page.locator('section.book[data-tier="on_demand"]')
    await expect(on_demand.locator('table[data-side="asks"] tbody tr')).to_have_count(1)
    await expect(on_demand.locator('table[data-side="bids"] tbody tr')).to_have_count(1)
    interruptible = page.locator('section.book[data-tier="interruptible"]')
    await expect(interruptible.locator('table[data-side="asks"] tbody tr')).to_have_count(1)


async def test_the_gpu_page_shows_the_chart_and_the_depth(
    pages: Pages, traded: None, screenshots: Path
) -> None:
    page = await pages.open(f"/gpus/{GPU}")
    await expect(page.get_by_role("heading", level=1)).to_have_text("A100 SXM")
    await chart_and_depth(page)
    await expect(page.locator('dl.asks [data-tier="on_demand"]')).to_have_attribute(
        "data-price", "1.99", timeout=LIVE_S
    )
    asks = page.locator('section.book[data-tier="on_demand"] table[data-side="asks"]')
    await expect(asks.locator("tbody tr").first).to_contain_text("$1.99")
    # Another candle width: the same trades in one daily candle.
    await page.get_by_role("radio", name="1 day").check()
    await expect(page.locator(".chart")).to_have_attribute("data-candles", CANDLES, timeout=LIVE_S)
    await page.get_by_text("The candles as a table").click()
    shown = await page.locator(".chart").get_attribute("data-candles")
    await expect(page.locator("details.candles tbody tr")).to_have_count(int(shown or 0))
    await assert_basics(page, "A100 SXM: specs, prices and order book")
    await screenshot(page, screenshots / "gpu-desktop.png")


async def test_the_gpu_page_from_the_market_on_a_phone_in_german(
    pages: Pages, traded: None, screenshots: Path
) -> None:
    page = await pages.open("/", locale="de-DE", phone=True)
    await page.locator(f'tr[data-gpu="{GPU}"] th a').click()
    await expect(page).to_have_url(f"{pages.base_url}/gpus/{GPU}")
    await expect(page.get_by_role("heading", level=1)).to_be_focused()
    await chart_and_depth(page)
    await expect(page.get_by_role("heading", name="Orderbuch")).to_be_visible()
    await assert_fits_the_width(page)
    await assert_basics(page, "A100 SXM: Daten, Preise und Orderbuch")
    await screenshot(page, screenshots / "gpu-phone.png")
