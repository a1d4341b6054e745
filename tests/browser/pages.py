"""Watched pages of the web app, and the checks every page must pass.

A page is opened in a browser context of its own (a locale, a viewport: desktop or phone),
with axe-core (from web/node_modules, so nothing is fetched) added before the app's scripts
run. Whatever the page logs as an error, throws, or fails to load is kept and reported when
the pages are closed; requests the page cancels itself (the price stream on close) are not
failures.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from playwright.async_api import (
    Browser,
    BrowserContext,
    ConsoleMessage,
    Error,
    Page,
    Request,
    ViewportSize,
    expect,
)

DESKTOP = ViewportSize(width=1280, height=900)
PHONE = ViewportSize(width=390, height=844)
"""A phone's width in CSS pixels (an iPhone 12 to 15)."""
LANDMARKS: tuple[Literal["banner", "navigation", "main", "contentinfo"], ...] = (
    "banner",
    "navigation",
    "main",
    "contentinfo",
)
AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]

UNLABELLED = """() => [...document.querySelectorAll('input, select, textarea')]
  .filter((field) => field.type !== 'hidden')
  .filter((field) => field.labels.length === 0 && !field.getAttribute('aria-label')
    && !field.getAttribute('aria-labelledby'))
  .map((field) => field.outerHTML)"""
AXE = """async (tags) => {
  const result = await window.axe.run(document, { runOnly: { type: 'tag', values: tags } });
  return result.violations.map((v) => `${v.id} (${v.impact}): ${v.help}: `
    + v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(', '));
}"""


@dataclass
class Pages:
    """Opens pages of the web app at ``base_url`` and keeps what went wrong on them."""

    browser: Browser
    base_url: str
    axe_script: Path
    errors: list[str] = field(default_factory=list)
    expected: list[re.Pattern[str]] = field(default_factory=list)
    contexts: list[BrowserContext] = field(default_factory=list)
    closing: bool = False

    async def open(self, path: str, *, locale: str = "en-US", phone: bool = False) -> Page:
        """A new context (``locale``, desktop or phone) with one page at ``path``."""
        context = await self.browser.new_context(
            base_url=self.base_url,
            locale=locale,
            viewport=PHONE if phone else DESKTOP,
            is_mobile=phone,
            has_touch=phone,
            device_scale_factor=1,
            timezone_id="Europe/Berlin",
            service_workers="block",
        )
        self.contexts.append(context)
        await context.add_init_script(path=self.axe_script)
        page = await context.new_page()
        page.on("console", self._console)
        page.on("pageerror", self._page_error)
        page.on("requestfailed", self._request_failed)
        await page.goto(path)
        return page

    def expect_console_error(self, pattern: str) -> None:
        """A console error the test itself provokes (the browser logs every 4xx answer, such
        as a refused row of a bulk upload): not a failure. Nothing else is excused."""
        self.expected.append(re.compile(pattern))

    def _console(self, message: ConsoleMessage) -> None:
        if any(p.search(f"{message.text} ({message.location.get('url')})") for p in self.expected):
            return
        if message.type == "error":
            self.errors.append(f"console: {message.text} ({message.location.get('url')})")

    def _page_error(self, error: Error) -> None:
        self.errors.append(f"uncaught: {error.message}")

    def _request_failed(self, request: Request) -> None:
        failure = request.failure or ""
        if self.closing or "ERR_ABORTED" in failure:
            return  # cancelled by the page (a navigation, the stream's abort) or by closing
        self.errors.append(f"request failed: {request.method} {request.url}: {failure}")

    async def close(self) -> list[str]:
        """Close every context; what went wrong on their pages."""
        self.closing = True
        for context in self.contexts:
            await context.close()
        return self.errors


async def assert_basics(page: Page, title: str) -> None:
    """A title, the landmarks, one h1, labelled form fields, and no axe-core violation of
    WCAG 2.1 A/AA."""
    await expect(page).to_have_title(f"{title} · gpux")
    for role in LANDMARKS:
        assert await page.get_by_role(role).count() >= 1, f"no {role} landmark"
    assert await page.get_by_role("main").count() == 1
    assert await page.locator("h1").count() == 1
    unlabelled: list[str] = await page.evaluate(UNLABELLED)
    assert unlabelled == [], f"form fields without a label: {unlabelled}"
    violations: list[str] = await page.evaluate(AXE, AXE_TAGS)
    assert violations == [], "\n".join(violations)


async def assert_fits_the_width(page: Page) -> None:
    """Nothing but the tables' own scrollers is wider than the viewport."""
    overflow: dict[str, Any] = await page.evaluate(
        """() => ({ page: document.documentElement.scrollWidth, viewport: window.innerWidth })"""
    )
    assert overflow["page"] <= overflow["viewport"], overflow


async def screenshot(page: Page, path: Path) -> None:
    """The whole page, animations stopped, the caret hidden."""
    await page.screenshot(path=str(path), full_page=True, animations="disabled", caret="hide")
