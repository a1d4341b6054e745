"""The fine-tuning guide at ``/guide`` against the real exchange: the fit table lists every GPU
of the catalog with its live best ask, the explanations, and the "what fits" finder (a model
and a method → the GPUs that hold the job, cheapest job first at the live best asks, as the
gateway's own recommendation ranks them); German numbers; a phone's width; each page's basics;
screenshots for docs/."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Page, expect

from .exchange_api import Api
from .pages import Pages, assert_basics, assert_fits_the_width, screenshot

pytestmark = pytest.mark.e2e

LIVE_S = 30_000
NBSP = "\u00a0"
OFFERS = {"l4": "0.21", "rtx-3090": "0.24", "h100-pcie": "1.59", "b200": "3.49"}
"""USD per GPU-hour on GPUs the other browser tests leave alone (their best asks stay theirs)."""
MODEL, MODEL_NAME = "qwen-2.5-7b", "Qwen2.5 7B"
METHOD, METHOD_NAME = "lora", "LoRA (16-bit base)"
JOB = {"examples": "10000", "avg_tokens": "1024", "epochs": "1"}
"""The finder's defaults, which the test keeps."""


@pytest.fixture(scope="module")
async def seller(exchange: str) -> AsyncIterator[Api]:
    """A seller whose on-demand offers are on the book."""
    account = await Api.seller_with(exchange, "Guide GPU Farm", OFFERS)
    yield account
    await account.close()


async def recommendation(exchange: str) -> dict[str, Any]:
    """The gateway's own ranking of the job the test asks the finder for."""
    query = {"model": MODEL, "method": METHOD, "currency": "USD", "tier": "on_demand", **JOB}
    answer: dict[str, Any] = await Api(exchange).call("GET", "/v1/recommendations", params=query)
    assert answer["ranked_by"] == "cost", answer
    return answer


async def find(page: Page) -> None:
    """Choose the model and the method, and submit the finder by keyboard."""
    await page.get_by_label("Model", exact=True).select_option(MODEL)
    await page.get_by_role("radio", name=METHOD_NAME).check()
    await page.get_by_label("Training examples").press("Enter")
    heading = page.locator(".finder-result h3")
    await expect(heading).to_have_text(f"{MODEL_NAME} with {METHOD_NAME}", timeout=LIVE_S)


async def ranked_rows(page: Page) -> list[dict[str, str]]:
    """The finder's rows, as shown: the GPU and the job's cost (a decimal, or '' unpriced)."""
    rows: list[dict[str, str]] = await page.locator("table.finder tbody tr").evaluate_all(
        "(rows) => rows.map((r) => ({ gpu: r.dataset.gpu, cost: r.dataset.cost }))"
    )
    return rows


async def the_fit_table(page: Page, exchange: str) -> None:
    """Every GPU of the catalog in its order, its figures from the catalog, its live ask; the
    explanations."""
    catalog = (await Api(exchange).call("GET", "/v1/gpus"))["items"]
    table = page.locator("table.market tbody tr[data-gpu]")
    await expect(table).to_have_count(len(catalog))
    shown = await table.evaluate_all("(rows) => rows.map((row) => row.dataset.gpu)")
    assert shown == [gpu["id"] for gpu in catalog]
    rtx_4090 = page.locator('table.market tr[data-gpu="rtx-4090"]')
    await expect(rtx_4090.locator("td").nth(1)).to_have_text("1,008 GB/s")
    await expect(rtx_4090.locator("td.col-qlora")).to_have_text(f"≈{NBSP}15B")
    await expect(rtx_4090.locator("td.col-lora16")).to_have_text(f"≈{NBSP}7B")
    await expect(rtx_4090.locator("td.col-full")).to_have_text(f"≈{NBSP}1B")
    l4 = page.locator('table.market tr[data-gpu="l4"] td.col-price')
    await expect(l4).to_have_text("from $0.21", timeout=LIVE_S)
    explained = ("QLoRA: a 4-bit base model", "LoRA with a 16-bit base model", "Why memory decides")
    for title in explained:
        await expect(page.get_by_role("heading", name=title)).to_be_visible()


async def the_ranking(page: Page, exchange: str) -> str:
    """The finder's rows are the gateway's recommendation, cheapest job first, each cost the
    gateway's; the cheapest GPU's id."""
    expected = await recommendation(exchange)
    first = expected["items"][0]
    rows = page.locator("table.finder tbody tr")
    await expect(rows).to_have_count(len(expected["items"]))
    await expect(rows.first).to_have_attribute("data-gpu", first["gpu_id"], timeout=LIVE_S)
    shown = await ranked_rows(page)
    costs = [Decimal(row["cost"]) for row in shown if row["cost"]]
    assert costs == sorted(costs), shown
    assert Decimal(shown[0]["cost"]) == Decimal(first["cost"]), (shown[0], first)
    priced = [row["cost"] != "" for row in shown]
    assert priced == sorted(priced, reverse=True), "a GPU without an offer before one with"
    assert [row["gpu"] for row in shown] == [item["gpu_id"] for item in expected["items"]]
    hours = re.compile(rf"^\d[\d,]*(\.\d{{1,2}})?{NBSP}hr$")
    await expect(rows.first.locator("td.col-hours")).to_have_text(hours)
    await expect(rows.first.locator("td.col-cost")).to_have_text(re.compile(r"^\$\d+\.\d{2,4}$"))
    return str(first["gpu_id"])


async def in_german(page: Page) -> None:
    """The language switch: the same page in German numbers (the currency stays dollars)."""
    await page.get_by_label("Language").select_option("de")
    await expect(page.locator("html")).to_have_attribute("lang", "de")
    await expect(page.locator(".finder-result h3")).to_have_text(
        f"{MODEL_NAME} mit LoRA (Basis in 16 Bit)"
    )
    rtx_4090 = page.locator('table.market tr[data-gpu="rtx-4090"]')
    await expect(rtx_4090.locator("td").nth(1)).to_have_text("1.008 GB/s")
    await expect(rtx_4090.locator("td.col-qlora")).to_have_text(f"≈{NBSP}15{NBSP}Mrd.")
    l4 = page.locator('table.market tr[data-gpu="l4"] td.col-price')
    await expect(l4).to_have_text(f"ab 0,21{NBSP}$")
    first = page.locator("table.finder tbody tr").first
    de_hours = re.compile(rf"^\d[\d.]*(,\d{{1,2}})?{NBSP}Std\.$")
    await expect(first.locator("td.col-hours")).to_have_text(de_hours)
    await expect(first.locator("td.col-cost")).to_have_text(re.compile(rf"^\d+,\d{{2,4}}{NBSP}\$$"))
    await assert_basics(page, "Fine-Tuning-Ratgeber: GPUs für offene Modelle")


async def test_the_guide_lists_every_gpu_and_finds_the_cheapest_job(
    pages: Pages, seller: Api, exchange: str, screenshots: Path
) -> None:
    page = await pages.open("/")
    await page.get_by_role("navigation").get_by_role("link", name="Fine-tuning guide").click()
    await expect(page).to_have_url(f"{pages.base_url}/guide")
    heading = page.get_by_role("heading", level=1)
    await expect(heading).to_have_text("Which GPU fine-tunes your model")
    await expect(heading).to_be_focused()
    await the_fit_table(page, exchange)
    await find(page)
    cheapest = await the_ranking(page, exchange)
    await assert_basics(page, "Fine-tuning guide: GPUs for open models")
    await screenshot(page, screenshots / "guide-desktop.png")
    await in_german(page)
    # Each GPU of the ranking links to its page.
    await page.locator("table.finder tbody tr").first.get_by_role("link").click()
    await expect(page).to_have_url(f"{pages.base_url}/gpus/{cheapest}")


async def test_the_guide_on_a_phone_in_german(pages: Pages, seller: Api, screenshots: Path) -> None:
    page = await pages.open("/guide", locale="de-DE", phone=True)
    await expect(page.get_by_role("heading", level=1)).to_have_text(
        "Welche GPU Ihr Modell feinabstimmt"
    )
    await expect(page.locator("table.market tbody tr[data-gpu]").first).to_be_visible()
    # German readers start in euros; the default job is ranked at the live asks.
    first = page.locator("table.finder tbody tr").first
    await expect(first.locator("td.col-cost")).to_have_text(
        re.compile(rf"^\d+,\d{{2,4}}{NBSP}€$"), timeout=LIVE_S
    )
    # Both tables scroll sideways on a phone, and say so.
    hints = page.get_by_text("Seitlich wischen, um alle Spalten zu sehen.")
    await expect(hints).to_have_count(2)
    await expect(hints.last).to_be_visible()
    await assert_fits_the_width(page)
    await assert_basics(page, "Fine-Tuning-Ratgeber: GPUs für offene Modelle")
    await screenshot(page, screenshots / "guide-phone.png")
