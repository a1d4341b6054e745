"""The browser suite's world: Debian's chromium (installed here when missing), the whole
exchange as ``make up`` runs it (every service its own process, on a database and namespace of
this session's own), the web app as ``make web`` built it, and Playwright driving chromium
headless (never a browser download: ``executable_path`` is Debian's binary).

Every page a test opens is watched: a console error, an uncaught exception or a failed
request fails the test that opened it, when the page is closed.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from playwright.async_api import Browser, async_playwright
from pydantic import SecretStr

from gpux_devinfra.infra import Endpoints
from gpux_devinfra.system import InfraError, apt_install
from gpux_devinfra.testing.exchange import exchange_processes
from gpux_devinfra.testing.plugin import isolated_settings
from gpux_platform.settings import GpuxSettings

from .pages import Pages

ROOT = Path(__file__).resolve().parents[2]
WEB = ROOT / "web"
DIST = WEB / "dist"
CHROMIUM = Path("/usr/bin/chromium")
"""Debian's chromium package (``apt-get install chromium``)."""
LOGS = Path(os.environ.get("GPUX_HOME", ROOT / ".gpux")) / "logs" / "browser"
RAISED_LIMIT = "100000/minute"
SETTINGS = {
    # Every page's reads come from one address (the test's); the exchange's own default
    # (30 anonymous reads a minute) is for the public.
    "GPUX_RATE_LIMIT": RAISED_LIMIT,
    "GPUX_ANONYMOUS_RATE_LIMIT": RAISED_LIMIT,
    "GPUX_DEV_TOPUPS": "true",
    "GPUX_LOG_LEVEL": "WARNING",
}


def chromium() -> Path:
    """Debian's chromium, installed with apt-get (as gpux installs PostgreSQL and Redis)."""
    if not CHROMIUM.exists():
        try:
            apt_install("chromium")
        except InfraError as exc:
            pytest.fail(f"the browser tests need Debian's chromium: {exc}")
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing after installing the chromium package")
    return CHROMIUM


def stale_sources(dist: Path, web: Path) -> list[str]:
    """The web app's sources newer than its build (none: the build is current)."""
    built = (dist / "index.html").stat().st_mtime
    sources = [web / "index.html", web / "package-lock.json", *(web / "src").rglob("*")]
    return [
        str(path.relative_to(web))
        for path in sources
        if path.is_file() and not path.name.endswith(".gen.d.ts") and path.stat().st_mtime > built
    ]


@pytest.fixture(scope="session")
def web_build() -> Path:
    """web/dist, built and current (``make test`` builds it first; so does ``make web``)."""
    if not (DIST / "index.html").is_file():
        pytest.fail("web/dist is missing: run `make web` (npm ci and the Vite build) first")
    stale = stale_sources(DIST, WEB)
    if stale:
        pytest.fail(f"web/dist is older than {', '.join(stale[:3])}: run `make web` first")
    return DIST


@pytest.fixture(scope="session")
async def exchange(infra_endpoints: Endpoints, web_build: Path) -> AsyncIterator[str]:
    """Every process of the exchange, ready; the gateway's URL (the web app at ``/``)."""
    async with isolated_settings(infra_endpoints, "b" + os.urandom(5).hex()) as settings:
        endpoints = _endpoints(settings)
        shutil.rmtree(LOGS, ignore_errors=True)
        with exchange_processes(endpoints, settings.namespace, LOGS, SETTINGS) as processes:
            processes.start()
            await processes.ready(timeout_s=120)
            yield processes.url


def _endpoints(settings: GpuxSettings) -> Endpoints:
    database_url: SecretStr = settings.database_url
    return Endpoints(settings.kafka_bootstrap, database_url.get_secret_value(), settings.redis_url)


@pytest.fixture(scope="session")
async def browser() -> AsyncIterator[Browser]:
    """Headless chromium, Debian's, for the whole session."""
    executable = chromium()
    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(executable_path=str(executable), headless=True)
        try:
            yield launched
        finally:
            await launched.close()


@pytest.fixture
async def pages(browser: Browser, exchange: str) -> AsyncIterator[Pages]:
    """Opens watched pages of the exchange's web app; fails on what they logged."""
    opened = Pages(browser, exchange, WEB / "node_modules" / "axe-core" / "axe.min.js")
    try:
        yield opened
    finally:
        errors = await opened.close()
    assert not errors, "the pages logged errors:\n" + "\n".join(errors)


@pytest.fixture(scope="session")
def screenshots() -> Path:
    """docs/screenshots, where each page is kept at desktop and phone width (committed; the
    README shows the market from there)."""
    folder = ROOT / "docs" / "screenshots"
    folder.mkdir(parents=True, exist_ok=True)
    return folder
