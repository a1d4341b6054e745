"""The market page at ``/`` against the real exchange: every GPU of the catalog, the best ask
pushed by the price stream without a reload, currency, tier and language switches, sortable
columns by keyboard, a phone's width; each page's basics; screenshots for docs/."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from playwright.async_api import Page, Request, expect

from .exchange_api import Api
from .pages import Pages, assert_basics, assert_fits_the_width, screenshot

pytestmark = pytest.mark.e2e

LIVE_S = 30_000
"""How long (ms) a change may take to reach the page: pricing, Redis, the stream, the page."""
NBSP = "\u00a0"


REFERENCE = {
    "rtx-5090": "0.69",
    "rtx-a6000": "0.33",
    "l40s": "0.79",
    "rtx-6000-ada": "0.74",
    "h100-sxm": "2.88",
    "rtx-pro-6000-blackwell": "1.69",
    "h200": "4.19",
}
"""The reference page's best asks (USD per GPU-hour), but the RTX 4090's, which the live test
sets itself."""


@pytest.fixture(scope="module")
async def seller(exchange: str) -> AsyncIterator[Api]:
    """A seller whose offers are the reference page's prices, on the book."""
    account = await Api.seller_with(exchange, "Browser GPU Farm", REFERENCE)
    yield account
    await account.close()


async def live(page: Page) -> None:
    """Until the page's price stream is connected."""
    await expect(page.locator("[data-stream]")).to_have_attribute(
        "data-stream", "live", timeout=LIVE_S
    )


async def test_the_best_ask_changes_without_a_reload(
    pages: Pages, seller: Api, exchange: str, screenshots: Path
) -> None:
    await seller.offer("rtx-4090", "0.45")
    await seller.best_ask("rtx-4090", "on_demand", "0.45")
    page = await pages.open("/")
    cell = page.locator('tr[data-gpu="rtx-4090"] td.col-price')
    await expect(cell).to_have_attribute("data-price", "0.45", timeout=LIVE_S)
    await expect(cell).to_have_text("from $0.45")
    await live(page)
    # Every GPU model of the catalog has its row.
    catalog = await Api(exchange).call("GET", "/v1/gpus")
    await expect(page.locator("tbody tr[data-gpu]")).to_have_count(len(catalog["items"]))

    reads: list[str] = []

    def note(request: Request) -> None:
        if request.resource_type == "document" or "/v1/prices" in request.url:
            reads.append(request.url)

    await page.evaluate("() => { window.sameDocument = true; }")
    page.on("request", note)
    await seller.offer("rtx-4090", "0.39")
    await expect(cell).to_have_attribute("data-price", "0.39", timeout=LIVE_S)
    await expect(cell).to_have_text("from $0.39")
    # The stream brought it: no reload, no new read of the prices.
    assert await page.evaluate("() => window.sameDocument === true")
    assert reads == []

    await assert_basics(page, "GPU market")
    await screenshot(page, screenshots / "market-desktop.png")


async def test_german_numbers_and_the_switches(
    pages: Pages, seller: Api, screenshots: Path
) -> None:
    page = await pages.open("/", locale="de-DE")
    await expect(page.locator("html")).to_have_attribute("lang", "de")
    await expect(page.get_by_role("heading", level=1)).to_have_text("Der Markt für GPU-Stunden")
    row = page.locator('tr[data-gpu="rtx-4090"]')
    await expect(row.locator("td").nth(1)).to_have_text("1.008 GB/s")
    await expect(row.locator("td").nth(2)).to_have_text(f"≈{NBSP}15{NBSP}Mrd.")
    # German readers start in euros: the USD offer converted at the exchange's rate.
    h100 = page.locator('tr[data-gpu="h100-sxm"] td.col-price')
    await expect(h100).to_have_text(re.compile(rf"^ab \d+,\d{{2,4}}{NBSP}€$"), timeout=LIVE_S)
    await assert_basics(page, "GPU-Markt")
    await screenshot(page, screenshots / "market-desktop-de.png")

    await page.get_by_label("Währung").select_option("USD")
    await expect(h100).to_have_text(f"ab 2,88{NBSP}$", timeout=LIVE_S)
    await page.get_by_label("Sprache").select_option("en")
    await expect(page.locator("html")).to_have_attribute("lang", "en")
    await expect(h100).to_have_text("from $2.88")
    await sorting_by_keyboard(page)

    # The tier switch by keyboard: arrow keys move within the radio group.
    await page.get_by_role("radio", name="On-demand").focus()
    await page.keyboard.press("ArrowRight")
    await expect(page.get_by_role("radio", name="Interruptible")).to_be_checked()
    await expect(h100).to_have_text("no offer", timeout=LIVE_S)


async def sorting_by_keyboard(page: Page) -> None:
    """Price ascending, then descending, by Enter on the column's button; no price last."""
    header = page.locator("th.col-price")
    await header.get_by_role("button").focus()
    await page.keyboard.press("Enter")
    await expect(header).to_have_attribute("aria-sort", "ascending")
    order = await page.locator("tbody tr[data-gpu]").evaluate_all(
        "(rows) => rows.map((row) => row.dataset.gpu)"
    )
    assert order.index("l40s") < order.index("h100-sxm")
    await page.keyboard.press("Enter")
    await expect(header).to_have_attribute("aria-sort", "descending")
    order = await page.locator("tbody tr[data-gpu]").evaluate_all(
        "(rows) => rows.map((row) => row.dataset.gpu)"
    )
    assert order.index("h100-sxm") < order.index("l40s")
    priced = await page.locator("tbody td.col-price").evaluate_all(
        "(cells) => cells.map((cell) => cell.dataset.price !== '')"
    )
    assert priced == sorted(priced, reverse=True), "a row without a price before one with"


async def test_the_market_on_a_phone(pages: Pages, screenshots: Path) -> None:
    page = await pages.open("/", phone=True)
    await expect(page.locator("tbody tr[data-gpu]").first).to_be_visible()
    await expect(page.get_by_text("Swipe sideways to see every column.")).to_be_visible()
    scroller = page.locator(".scroller").first
    widths = await scroller.evaluate("(el) => [el.scrollWidth, el.clientWidth]")
    assert widths[0] > widths[1], "the table should scroll sideways on a phone"
    await assert_fits_the_width(page)
    await assert_basics(page, "GPU market")
    await screenshot(page, screenshots / "market-phone.png")
    # The skip link is the first thing the keyboard reaches.
    await page.keyboard.press("Tab")
    await expect(page.locator("a.skip")).to_be_focused()


async def test_an_unknown_path_is_the_apps_not_found_page(pages: Pages) -> None:
    page = await pages.open("/nowhere/at/all")
    await expect(page.get_by_role("heading", level=1)).to_have_text("Page not found")
    await page.get_by_role("link", name="Back to the market").click()
    await expect(page).to_have_url(re.compile(r"/$"))
    await expect(page.get_by_role("heading", level=1)).to_have_text("The market for GPU-hours")
    await assert_basics(page, "GPU market")
