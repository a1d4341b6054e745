"""Webhooks over HTTP: where an endpoint URL leads (``asyncio`` getaddrinfo), and the POST
of a delivery (``httpx``) to the very address that was checked.

Each attempt resolves the host again and checks every address (a name may be rebound to a
private address after the endpoint was stored); it then connects to the first checked
address itself, with the URL's host in ``Host`` and in TLS's SNI and certificate check, so
no second resolution can lead elsewhere. Redirects are not followed; the response body is
not read.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Mapping

import httpx

from gpux_gateway.domain import webhooks as rules
from gpux_gateway.webhooks.dispatch import Sent

UNRESOLVED = "cannot resolve host"


async def resolve(host: str, port: int) -> list[str]:
    """The addresses ``host`` resolves to (an IP literal: itself), in resolver order."""
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


class WebhookTargets:
    """The gateway's ``UrlGuard``: private targets and http are allowed only when
    ``allow_private`` (development and tests)."""

    def __init__(self, *, allow_private: bool) -> None:
        self._allow_private = allow_private

    async def where(self, url: str) -> tuple[rules.Target, list[str]]:
        """The URL's target and its checked addresses, or the refusal as ``WebhookUrlError``."""
        target = rules.target(url, allow_http=self._allow_private)
        try:
            addresses = await resolve(target.host, target.port)
        except (OSError, UnicodeError):
            raise rules.WebhookUrlError(UNRESOLVED) from None
        if not addresses:
            raise rules.WebhookUrlError(UNRESOLVED)
        if not self._allow_private and rules.blocked_among(addresses) is not None:
            raise rules.WebhookUrlError(rules.BLOCKED_ADDRESS)
        return target, addresses

    async def refusal(self, url: str) -> str | None:
        """Why ``url`` may not be an endpoint's, or None."""
        try:
            await self.where(url)
        except rules.WebhookUrlError as exc:
            return str(exc)
        return None


class HttpWebhooks:
    """The gateway's ``Sender``: each POST goes to an address ``targets`` checked."""

    def __init__(self, targets: WebhookTargets, *, timeout_s: float = 10.0) -> None:
        self._targets = targets
        self._client = httpx.AsyncClient(timeout=timeout_s, follow_redirects=False, trust_env=False)

    async def aclose(self) -> None:
        """Close the connections kept open."""
        await self._client.aclose()

    async def send(self, url: str, body: bytes, headers: Mapping[str, str]) -> Sent:
        """POST ``body`` to the checked address of ``url``'s host."""
        loop = asyncio.get_running_loop()
        started = loop.time()

        def sent(status: int | None, error: str | None) -> Sent:
            return Sent(status, error, int((loop.time() - started) * 1000))

        try:
            target, addresses = await self._targets.where(url)
        except rules.WebhookUrlError as exc:
            return sent(None, str(exc))
        given = httpx.URL(url)
        request_url = given.copy_with(host=addresses[0].split("%", 1)[0])
        extensions = {"sni_hostname": target.host} if target.scheme == "https" else {}
        try:
            async with self._client.stream(
                "POST",
                request_url,
                content=body,
                headers={**headers, "Host": given.netloc.decode("ascii")},
                extensions=extensions,
            ) as response:
                status = response.status_code
        except httpx.TimeoutException:
            return sent(None, "timeout")
        except httpx.HTTPError as exc:
            return sent(None, f"connection failed: {type(exc).__name__}")
        return sent(status, None if rules.is_success(status) else f"HTTP {status}")
