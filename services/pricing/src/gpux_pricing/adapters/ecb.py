"""The ECB's euro foreign exchange reference rates over HTTP: a rate source for the FX loader.

Each read is one GET of the daily XML (``domain.ecb`` reads it), with a timeout, tried again
after transport errors, 429 and 5xx (the ECB's site has its moments) with a doubling pause;
a refusal (another 4xx) or a document that is not the ECB's is not tried again. Whatever
fails raises ``RateSourceError``: the loader logs and counts it, and the rates published
before stay in force.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from http import HTTPStatus
from typing import ClassVar

import httpx

from gpux_contracts.fx import RatePublished
from gpux_pricing.domain import ecb
from gpux_pricing.service.fx import RateSourceError

log = logging.getLogger("gpux.pricing.fx")

Sleep = Callable[[float], Awaitable[None]]


def client(timeout_s: float) -> httpx.AsyncClient:
    """The HTTP client of the ECB source: every phase bounded by ``timeout_s``."""
    return httpx.AsyncClient(
        timeout=httpx.Timeout(timeout_s),
        headers={"Accept": "application/xml, text/xml"},
        follow_redirects=True,
    )


def _retryable(exc: httpx.HTTPError) -> bool:
    if isinstance(exc, httpx.HTTPStatusError):
        status = exc.response.status_code
        return status == HTTPStatus.TOO_MANY_REQUESTS or status >= HTTPStatus.INTERNAL_SERVER_ERROR
    return isinstance(exc, httpx.TransportError)


@dataclass(frozen=True, slots=True)
class EcbRates:
    """The ECB's daily reference rates, read with ``http`` from ``url``: ``attempts`` tries,
    pausing ``backoff_s``, then twice that, ... between them."""

    http: httpx.AsyncClient
    url: str
    attempts: int = 3
    backoff_s: float = 1.0
    sleep: Sleep = asyncio.sleep
    name: ClassVar[str] = "ecb"

    async def fetch(self, now: datetime) -> list[RatePublished]:
        """The newest day's rates the ECB publishes (``now`` is unused: the ECB dates them)."""
        document = await self._download()
        try:
            return ecb.rates_of(ecb.parse(document))
        except ecb.EcbError as exc:
            raise RateSourceError(f"{self.url}: {exc}") from exc

    async def _download(self) -> bytes:
        attempt = 1
        while True:
            try:
                response = await self.http.get(self.url)
                return response.raise_for_status().content
            except httpx.HTTPError as exc:
                if attempt >= self.attempts or not _retryable(exc):
                    raise RateSourceError(f"{self.url}: {type(exc).__name__}: {exc}") from exc
                pause_s = self.backoff_s * 2 ** (attempt - 1)
                log.warning(
                    "ECB rates: attempt %d of %d failed (%s); again in %.1f s",
                    attempt,
                    self.attempts,
                    type(exc).__name__,
                    pause_s,
                )
            await self.sleep(pause_s)
            attempt += 1
