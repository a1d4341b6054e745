"""The buyer's and the seller's consoles against the real exchange, signed in with the
gateway's browser session (an HttpOnly cookie; writes carry the CSRF token): a seller signs up
and pushes an offer (ready at the lease's start) that the market, open in another browser
context, shows without a reload, re-prices it, uploads offers in bulk and withdraws one; a
buyer signs up, tops up, buys from the GPU page, sees the per-second cost tick, stops the
lease and finds the charge on the statement (and in its CSV export); API keys and sessions;
the finder recommends a GPU and buys it. Each page's basics, and screenshots for docs/."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import FilePayload, Page, Request, expect

from gpux_devinfra.testing.waiting import eventually

from .exchange_api import Api
from .pages import Pages, assert_basics, assert_fits_the_width, screenshot
from .test_guide import find, recommendation

pytestmark = pytest.mark.e2e

GPU, GPU_NAME = "a100-pcie-40gb", "A100 PCIe 40 GB"
"""The one GPU model the other browser tests leave alone."""
LIVE_S = 30_000
API_KEY = re.compile(r"^gpx_\S+$")
NBSP = "\u00a0"
SIGN_IN_TO_BUY = "Sign in or create a buyer account to buy"


def per_second_offer(price: str, gpus: int = 4) -> dict[str, Any]:
    """An on-demand offer in USD billed by the second, its machines ready at the start."""
    return {
        "gpu": GPU,
        "gpus": gpus,
        "price_per_gpu_hour": price,
        "currency": "USD",
        "tier": "on_demand",
        "billing": "second",
        "provisioning_timeout_seconds": 0,
    }


@pytest.fixture(scope="module")
async def farm(exchange: str) -> AsyncIterator[Api]:
    """A seller (through the API) with per-second GPUs of ``GPU`` on the book."""
    seller = await Api.sign_up(exchange, "Console GPU Farm", ["seller"])
    offer = await seller.call("POST", "/v1/offers", json=per_second_offer("0.41"))
    await seller.until(f"/v1/offers/{offer['id']}", lambda o: o["status"] == "live")
    yield seller
    await seller.close()


async def sign_up(page: Page, name: str, roles: set[str]) -> str:
    """Sign up in the console's form; the API key it showed once (then dismissed)."""
    await expect(page.get_by_role("heading", level=1)).to_have_text("Sign in to gpux")
    await page.get_by_label("Account name").fill(name)
    for role, label in (("buyer", "Buyer: rent GPUs"), ("seller", "Seller: offer GPUs")):
        await page.get_by_label(label).set_checked(role in roles)
    await page.get_by_role("button", name="Create account").click()
    shown = page.locator(".reveal input.key")
    await expect(shown).to_have_value(API_KEY)
    key = await shown.input_value()
    await page.get_by_role("button", name="I have stored it").click()
    await expect(page.locator(".reveal")).to_have_count(0)
    await expect(page.locator(".who")).to_contain_text(f"Signed in as {name}.")
    return key


async def no_key_kept(page: Page, key: str) -> None:
    """The page holds no API key: nothing in its storage, and the session cookie is HttpOnly."""
    stored: str = await page.evaluate(
        "() => JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage })"
    )
    assert key not in stored
    cookies = {c["name"]: c for c in await page.context.cookies()}
    assert cookies["gpux_session"].get("httpOnly") is True
    assert cookies["gpux_session"].get("sameSite") == "Strict"
    assert "gpux_session" not in await page.evaluate("() => document.cookie")
    assert "gpux_csrf" in await page.evaluate("() => document.cookie")


async def test_a_seller_signs_up_and_pushes_an_offer_the_market_shows_live(
    pages: Pages, exchange: str, screenshots: Path
) -> None:
    market = await pages.open("/")
    cell = market.locator(f'tr[data-gpu="{GPU}"] td.col-price')
    await expect(cell).to_be_visible()
    page = await pages.open("/seller/offers")
    key = await sign_up(page, "Console Seller", {"seller"})
    await no_key_kept(page, key)
    await expect(page.get_by_role("heading", level=1)).to_have_text("Seller: offers")
    form = page.get_by_role("form", name="New offer")
    await form.get_by_label("GPU", exact=True).select_option(GPU)
    await form.get_by_label("GPUs", exact=True).fill("2")
    await form.get_by_label("Price per GPU-hour (USD)").fill("0.37")
    await form.get_by_label("Interruptible price per GPU-hour (USD, optional)").fill("0.19")
    await form.get_by_label("Billing").select_option("second")
    await form.get_by_label("Provisioning timeout (seconds)").fill("0")
    await form.get_by_role("button", name="Offer GPUs").click()
    row = page.locator(f'table.offers tr[data-gpu="{GPU}"]').first
    await expect(row).to_have_attribute("data-status", "live", timeout=LIVE_S)
    await expect(row).to_contain_text("ready at start")
    # The market, open in another browser context, shows the new best ask without a reload.
    await expect(cell).to_have_attribute("data-price", "0.37", timeout=LIVE_S)
    await expect(cell).to_have_text("from $0.37")
    # Re-priced: the market follows.
    await row.get_by_label("New price").fill("0.36")
    await row.get_by_role("button", name="Re-price").click()
    await expect(cell).to_have_attribute("data-price", "0.36", timeout=LIVE_S)
    # The refused row's answer, which the browser logs as every 4xx.
    pages.expect_console_error(r"status of 422 \(Unprocessable Entity\) \(\S+/v1/offers\)")
    await bulk_upload(page)
    await assert_basics(page, "Seller: offers")
    await screenshot(page, screenshots / "seller-offers-desktop.png")
    await page.get_by_role("link", name="Earnings and leases").click()
    await expect(page.get_by_role("heading", level=1)).to_have_text("Seller: earnings and leases")
    await assert_basics(page, "Seller: earnings and leases")


async def bulk_upload(page: Page) -> None:
    """Three rows: one offered, one refused by the exchange, one the browser cannot read; the
    offered one is then withdrawn."""
    csv = (
        "gpu,gpus,price_per_gpu_hour,currency,billing,provisioning_timeout_seconds\n"
        f"{GPU},1,0.97,USD,second,0\n"
        f"{GPU},5000,0.98,USD,second,0\n"
        f"{GPU},two,0.99,USD,second,0\n"
    )
    upload = FilePayload(name="offers.csv", mimeType="text/csv", buffer=csv.encode())
    await page.get_by_label("CSV file of offers").set_input_files(files=[upload])
    await expect(page.get_by_text("3 rows read, 2 of them offers.")).to_be_visible()
    await page.get_by_role("button", name="Submit 2 offers").click()
    progress = page.locator(".bulk progress")
    await expect(progress).to_have_attribute("data-done", "2", timeout=LIVE_S)
    await expect(page.locator("[data-accepted]")).to_have_attribute("data-accepted", "1")
    errors = page.locator(".row-errors li")
    await expect(errors).to_have_count(2)
    await expect(errors.nth(0)).to_have_attribute("data-line", "3")
    await expect(errors.nth(1)).to_have_text("Line 4: gpus is not valid")
    bulk = page.locator("table.offers tr", has_text="$0.97")
    await expect(bulk).to_have_attribute("data-status", "live", timeout=LIVE_S)
    await bulk.get_by_role("button", name=f"Withdraw the offer of {GPU}").click()
    await expect(bulk).to_have_attribute("data-status", "withdrawn", timeout=LIVE_S)


async def charge_booked(exchange: str, key: str) -> None:
    """Until billing has booked a charge on the buyer's statement."""
    buyer = Api(exchange, key)
    try:
        await buyer.until(
            "/v1/ledger?currency=USD", lambda p: any(i["kind"] == "charge" for i in p["items"])
        )
    finally:
        await buyer.close()


async def buy_from_the_gpu_page(page: Page) -> None:
    """A market order for one GPU, an hour, from the GPU page; its lease's cost ticks."""
    await page.get_by_role("link", name="Market", exact=True).click()
    await page.locator(f'tr[data-gpu="{GPU}"] th a').click()
    await expect(page.get_by_role("heading", level=1)).to_have_text(GPU_NAME)
    panel = page.locator("section.buy")
    await panel.get_by_label("GPUs").fill("1")
    await panel.get_by_label("Hours").fill("1")
    await panel.get_by_role("button", name="Buy now").click()
    outcome = panel.locator(".buy-outcome")
    await expect(outcome.locator(".status").first).to_have_attribute(
        "data-status", "filled", timeout=LIVE_S
    )
    lease = outcome.locator("tr[data-lease]")
    await expect(lease).to_have_attribute("data-status", "running", timeout=LIVE_S)
    cost = lease.locator("td.cost")
    await expect(cost).to_have_attribute("data-ticking", "")
    first = await cost.get_attribute("data-cost")
    shown = await cost.inner_text()
    await expect(cost).not_to_have_attribute("data-cost", first or "", timeout=LIVE_S)
    await expect(cost).not_to_have_text(shown)
    await expect(cost).to_have_text(re.compile(r"^\$0\.\d{2,6}$"))


async def test_a_buyer_tops_up_buys_on_the_gpu_page_stops_and_finds_the_charge(
    pages: Pages, farm: Api, exchange: str, screenshots: Path
) -> None:
    page = await pages.open("/console")
    key = await sign_up(page, "Console Buyer", {"buyer"})
    await expect(page.get_by_role("heading", level=1)).to_have_text("Wallet")
    await page.get_by_label("Amount").fill("50")
    await page.get_by_role("button", name="Top up").click()
    usd = page.locator('table.balances tr[data-currency="USD"]')
    await expect(usd).to_have_attribute(
        "data-available", re.compile(r"^50(\.0+)?$"), timeout=LIVE_S
    )
    await assert_basics(page, "Wallet")
    await buy_from_the_gpu_page(page)
    await screenshot(page, screenshots / "gpu-buy-desktop.png")
    await page.get_by_role("link", name="All your leases").click()
    await expect(page.get_by_role("heading", level=1)).to_have_text("Leases")
    lease = page.locator("table.leases tr[data-lease]").first
    await expect(lease.locator("td.cost")).to_have_attribute("data-ticking", "")
    await assert_basics(page, "Leases")
    await screenshot(page, screenshots / "console-leases-desktop.png")
    await lease.get_by_role("button", name=f"Stop the lease of {GPU}").click()
    await expect(lease).to_have_attribute("data-status", "ended", timeout=LIVE_S)
    await expect(lease.locator("td.cost")).not_to_have_attribute("data-ticking", "")
    await charge_booked(exchange, key)
    await page.get_by_role("link", name="Statement").click()
    await expect(page.get_by_role("heading", level=1)).to_have_text("Statement")
    await expect(page.locator('table.statement tr[data-kind="charge"]').first).to_be_visible()
    await expect(page.locator('table.statement tr[data-kind="topup"]')).to_have_count(1)
    async with page.expect_download() as downloading:
        await page.get_by_role("button", name="Export CSV").click()
    download = await downloading.value
    exported = await asyncio.to_thread(Path(await download.path()).read_text)
    assert exported.startswith("created_at,kind,reference,account_kind,currency,amount,")
    assert ",charge," in exported
    assert ",topup," in exported
    await assert_basics(page, "Statement")
    await screenshot(page, screenshots / "console-statement-desktop.png")
    await page.get_by_role("button", name="Sign out").click()
    await expect(page.get_by_role("heading", level=1)).to_have_text("Sign in to gpux")
    assert "gpux_csrf" not in await page.evaluate("() => document.cookie")


async def signed_up_buyer(exchange: str, name: str) -> tuple[Api, str]:
    """A buyer made through the API, topped up with 50 USD; its client and key."""
    created = await Api(exchange).call(
        "POST", "/v1/accounts", json={"name": name, "roles": ["buyer"]}
    )
    key: str = created["api_key"]
    buyer = Api(exchange, key)
    topup = {"amount": "50", "currency": "USD", "provider": "dev"}
    await buyer.call("POST", "/v1/topups", json=topup)
    await buyer.until(
        "/v1/accounts/me/balances", lambda b: any(w["currency"] == "USD" for w in b["items"])
    )
    return buyer, key


async def sign_in(page: Page, key: str) -> None:
    """Sign in by pasting an API key."""
    await expect(page.get_by_role("heading", level=1)).to_have_text("Sign in to gpux")
    await page.get_by_label("API key", exact=True).fill(key)
    await page.get_by_role("button", name="Sign in").click()
    await expect(page.get_by_role("heading", level=1)).not_to_have_text("Sign in to gpux")


async def test_api_keys_and_sessions_in_the_console_on_a_phone(
    pages: Pages, exchange: str, screenshots: Path
) -> None:
    buyer, key = await signed_up_buyer(exchange, "Keys Buyer")
    page = await pages.open("/console/keys", phone=True)
    sent: list[Request] = []
    page.on("request", lambda request: sent.append(request) if "/v1/" in request.url else None)
    await sign_in(page, key)
    await no_key_kept(page, key)
    await expect(page.get_by_role("heading", level=1)).to_have_text("API keys and sessions")
    await expect(page.locator("table.sessions tr[data-current]")).to_have_count(1)
    form = page.get_by_role("form", name="New API key")
    await form.get_by_label("Name").fill("ci reader")
    await form.get_by_role("button", name="Create key").click()
    await expect(page.locator(".reveal input.key")).to_have_value(API_KEY)
    await page.get_by_role("button", name="I have stored it").click()
    row = page.locator("table.keys tr", has_text="ci reader")
    await expect(row).to_contain_text("read")
    keys = await buyer.call("GET", "/v1/accounts/me/keys")
    assert {k["name"]: k["scopes"] for k in keys["items"]}["ci reader"] == ["read"]
    await assert_fits_the_width(page)
    await assert_basics(page, "API keys and sessions")
    await screenshot(page, screenshots / "console-keys-phone.png")
    await row.get_by_role("button", name="Revoke the key ci reader").click()
    await expect(row).to_have_attribute("data-revoked", "")
    await writes_carry_the_csrf_token(page, sent)
    # Revoking this browser's own session signs it out.
    current = page.locator("table.sessions tr[data-current]")
    await current.get_by_role("button", name=re.compile(r"^Revoke the session of ")).click()
    await expect(page.get_by_role("heading", level=1)).to_have_text("Sign in to gpux")
    sessions = await buyer.call("GET", "/v1/sessions")
    assert sessions["items"] == []
    await buyer.close()


async def writes_carry_the_csrf_token(page: Page, sent: list[Request]) -> None:
    """Every write made with the session echoed its CSRF cookie; no request held a key."""
    token = next(c["value"] for c in await page.context.cookies() if c["name"] == "gpux_csrf")
    writes = [r for r in sent if r.method != "GET" and not r.url.endswith("/v1/sessions")]
    paths = [(r.method, r.url.split("/v1/", 1)[1]) for r in writes]
    assert ("POST", "accounts/me/keys") in paths
    assert any(m == "DELETE" and p.startswith("accounts/me/keys/") for m, p in paths), paths
    for request in writes:
        headers = await request.all_headers()
        assert headers.get("x-csrf-token") == token, request.url
        assert "idempotency-key" in headers or request.method != "POST", request.url
    for request in sent:
        assert "authorization" not in await request.all_headers(), request.url


async def test_the_finder_recommends_a_gpu_and_buys_it(
    pages: Pages, farm: Api, exchange: str, screenshots: Path
) -> None:
    buyer, key = await signed_up_buyer(exchange, "Finder Buyer")
    page = await pages.open("/guide")
    await find(page)
    # Signed out, the finder links to the sign-in, which comes back to the guide.
    await page.locator(".buy-cheapest").get_by_role("link", name=SIGN_IN_TO_BUY).click()
    await sign_in(page, key)
    await expect(page).to_have_url(f"{pages.base_url}/guide")
    await find(page)
    expected = (await recommendation(exchange))["items"][0]
    cheapest = page.locator(".buy-cheapest")
    await expect(cheapest).to_have_attribute("data-gpu", expected["gpu_id"], timeout=LIVE_S)
    await cheapest.get_by_role("button", name=re.compile(r"^Buy the cheapest: ")).click()
    lease = cheapest.locator("tr[data-lease]")
    await expect(lease).to_have_attribute("data-status", "running", timeout=LIVE_S)
    await screenshot(page, screenshots / "guide-buy-desktop.png")
    leases = await buyer.call("GET", "/v1/leases?role=buyer")
    (bought,) = leases["items"]
    assert bought["gpu"] == expected["gpu_id"]
    assert bought["hours"] == int(await cheapest.get_attribute("data-hours") or 0)
    await buyer.call("POST", f"/v1/leases/{bought['lease_id']}/stop")
    await eventually(
        lambda: buyer.call("GET", f"/v1/leases/{bought['lease_id']}"),
        lambda body: body["status"] == "ended",
        what="the finder's lease ended",
        timeout_s=30,
    )
    await buyer.close()


async def test_limit_orders_rest_and_are_cancelled(
    pages: Pages, farm: Api, exchange: str, screenshots: Path
) -> None:
    buyer, key = await signed_up_buyer(exchange, "Orders Buyer")
    page = await pages.open("/console/orders")
    await sign_in(page, key)
    await expect(page.get_by_role("heading", level=1)).to_have_text("Orders")
    form = page.get_by_role("form", name="Place order")
    await form.get_by_label("GPU", exact=True).select_option(GPU)
    await form.get_by_role("radio", name="Limit").check()
    await form.get_by_label("Tier").select_option("on_demand")
    await form.get_by_label("Hours").fill("2")
    await form.get_by_label("Limit per GPU-hour (USD)").fill("0.05")
    await form.get_by_label("Time in force").select_option("gtc")
    await form.get_by_role("button", name="Place order").click()
    # A good-till-date order names its date.
    await form.get_by_label("Time in force").select_option("gtd")
    until = datetime.now(UTC) + timedelta(days=2)
    await form.get_by_label("Rest until").fill(until.strftime("%Y-%m-%dT12:00"))
    await form.get_by_role("button", name="Place order").click()
    rows = page.locator("table.orders tbody tr")
    await expect(rows).to_have_count(2, timeout=LIVE_S)
    for row in await rows.all():
        await expect(row).to_have_attribute("data-status", "open", timeout=LIVE_S)
    await expect(rows.filter(has_text="GTD")).to_contain_text(until.strftime("%b %-d, %Y"))
    await assert_basics(page, "Orders")
    await screenshot(page, screenshots / "console-orders-desktop.png")
    for row in await rows.all():
        order = await row.get_attribute("data-order")
        await row.get_by_role("button", name=f"Cancel order {order}").click()
        await expect(row).to_have_attribute("data-status", "cancelled", timeout=LIVE_S)
    # The same console in German: its texts, dates and money.
    await page.get_by_label("Language").select_option("de")
    await expect(page.get_by_role("heading", level=1)).to_have_text("Aufträge")
    await expect(rows.first).to_contain_text("Gestrichen")
    await expect(rows.first).to_contain_text(f"0,05{NBSP}$")
    await assert_basics(page, "Aufträge")
    orders = await buyer.call("GET", "/v1/orders")
    assert {o["status"] for o in orders["items"]} == {"cancelled"}
    assert {o["time_in_force"] for o in orders["items"]} == {"gtc", "gtd"}
    await buyer.close()


async def test_signed_out_in_german_on_a_phone(pages: Pages, screenshots: Path) -> None:
    page = await pages.open("/seller", locale="de-DE", phone=True)
    await expect(page.get_by_role("heading", level=1)).to_have_text("Bei gpux anmelden")
    await expect(page.get_by_role("button", name="Konto anlegen")).to_be_visible()
    await assert_fits_the_width(page)
    await assert_basics(page, "Bei gpux anmelden")
    await screenshot(page, screenshots / "console-signin-phone-de.png")
    await page.get_by_role("navigation").get_by_role("link", name="Markt").click()
    await page.locator(f'tr[data-gpu="{GPU}"] th a').click()
    await expect(page.locator("section.buy")).to_contain_text(
        "Melden Sie sich an oder legen Sie ein Käuferkonto an, um zu kaufen"
    )


async def test_the_seller_hands_over_access_and_the_lease_runs(
    pages: Pages, exchange: str, screenshots: Path
) -> None:
    created = await Api(exchange).call(
        "POST", "/v1/accounts", json={"name": "Provisioning Farm", "roles": ["seller"]}
    )
    seller = Api(exchange, created["api_key"])
    body = {**per_second_offer("0.13", gpus=1), "provisioning_timeout_seconds": 600}
    offer = await seller.call("POST", "/v1/offers", json=body)
    await seller.until(f"/v1/offers/{offer['id']}", lambda o: o["status"] == "live")
    buyer, key = await signed_up_buyer(exchange, "Access Buyer")
    await buyer.call("POST", "/v1/orders", json={
        "gpu": GPU, "gpus": 1, "type": "market", "max_price_per_gpu_hour": "0.13",
        "currency": "USD", "tier": "on_demand", "time_in_force": "ioc", "hours": 1,
    })  # fmt: skip
    mine = await pages.open("/console/leases")
    await sign_in(mine, key)
    lease = mine.locator("table.leases tr[data-lease]")
    await expect(lease).to_have_attribute("data-status", "provisioning", timeout=LIVE_S)
    await expect(lease.locator("td.cost")).not_to_have_attribute("data-ticking", "")
    theirs = await pages.open("/seller")
    await sign_in(theirs, created["api_key"])
    provided = theirs.locator("table.leases tr[data-lease]")
    await expect(provided).to_have_attribute("data-status", "provisioning", timeout=LIVE_S)
    await provided.get_by_role("button", name=f"Post access details for the lease of {GPU}").click()
    handoff = provided.get_by_role("form")
    await handoff.get_by_label("Host").fill("gpu-7.example.net")
    await handoff.get_by_label("Port").fill("2222")
    await handoff.get_by_label("Login").fill("ubuntu")
    await handoff.get_by_label("Notes").fill("CUDA 12.4")
    await handoff.get_by_role("button", name="Post access").click()
    await expect(provided).to_have_attribute("data-status", "running", timeout=LIVE_S)
    await assert_basics(theirs, "Seller: earnings and leases")
    await screenshot(theirs, screenshots / "seller-desktop.png")
    await expect(lease).to_have_attribute("data-status", "running", timeout=LIVE_S)
    await expect(lease.locator("td.cost")).to_have_attribute("data-ticking", "")
    await lease.get_by_role("button", name=f"Access details of the lease of {GPU}").click()
    access = lease.locator("dl.access")
    await expect(access).to_contain_text("ssh -p 2222 ubuntu@gpu-7.example.net")
    await expect(access).to_contain_text("CUDA 12.4")
    await lease.get_by_role("button", name=f"Stop the lease of {GPU}").click()
    await expect(lease).to_have_attribute("data-status", "ended", timeout=LIVE_S)
    await seller.call("DELETE", f"/v1/offers/{offer['id']}")
    await seller.close()
    await buyer.close()


CONSOLE_PAGES = (
    ("/console", "console-wallet", "Wallet"),
    ("/console/orders", "console-orders", "Orders"),
    ("/console/leases", "console-leases", "Leases"),
    ("/console/statement", "console-statement", "Statement"),
    ("/console/keys", "console-keys", "API keys and sessions"),
    ("/seller", "seller", "Seller: earnings and leases"),
    ("/seller/offers", "seller-offers", "Seller: offers"),
)
"""Every page of both consoles: its path, its screenshots' name and its title."""
SHOT_ELSEWHERE = {
    "console-keys-phone",
    "console-leases-desktop",
    "console-orders-desktop",
    "console-statement-desktop",
    "seller-desktop",
    "seller-offers-desktop",
}
"""Screenshots the flows above take, of their pages in use."""


@pytest.mark.parametrize("phone", [False, True], ids=["desktop", "phone"])
async def test_every_console_page_has_the_basics_at_both_widths(
    pages: Pages, exchange: str, screenshots: Path, phone: bool
) -> None:
    created = await Api(exchange).call(
        "POST", "/v1/accounts", json={"name": "Both Sides", "roles": ["buyer", "seller"]}
    )
    for path, name, title in CONSOLE_PAGES:
        page = await pages.open(path, phone=phone)
        await sign_in(page, created["api_key"])
        await expect(page.get_by_role("heading", level=1)).to_have_text(title)
        await assert_basics(page, title)
        await assert_fits_the_width(page)
        shot = f"{name}-{'phone' if phone else 'desktop'}"
        if shot not in SHOT_ELSEWHERE:
            await screenshot(page, screenshots / f"{shot}.png")
        await page.context.close()
        pages.contexts.remove(page.context)
