"""Webhooks over HTTP: where an endpoint URL leads (``asyncio`` getaddrinfo, within
``RESOLVE_TIMEOUT_S``), and the POST of a delivery (``httpx``) to the very address that was
checked.

Each attempt resolves the host again and checks every address (a name may be rebound to a
private address after the endpoint was stored); it then connects to a checked address itself
(each in turn while connecting fails), with the URL's host in ``Host`` and in TLS's SNI and
certificate check, so no second resolution can lead elsewhere. No connection is kept alive:
the pool knows a connection by its address only, so one verified for a host must never carry
a request for another host of the same address. Redirects are not followed; the response body
is not read.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Awaitable, Callable, Mapping

import httpx

from gpux_gateway.domain import webhooks as rules
from gpux_gateway.webhooks.dispatch import Sent
from gpux_platform.waiting import within

UNRESOLVED = "cannot resolve host"
RESOLVE_TIMED_OUT = "cannot resolve host: timed out"
RESOLVE_TIMEOUT_S = 5.0
"""A host resolves within this (getaddrinfo has no timeout of its own), or the check fails."""

LIMITS = httpx.Limits(max_keepalive_connections=0)
"""No connection is kept alive (httpcore pools by address, not by the host verified)."""

Resolver = Callable[[str, int], Awaitable[list[str]]]


async def resolve(host: str, port: int) -> list[str]:
    """The addresses ``host`` resolves to (an IP literal: itself), in resolver order."""
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


class WebhookTargets:
    """The gateway's ``UrlGuard``: private targets and http are allowed only when
    ``allow_private`` (development and tests)."""

    def __init__(
        self,
        *,
        allow_private: bool,
        resolver: Resolver = resolve,
        resolve_timeout_s: float = RESOLVE_TIMEOUT_S,
    ) -> None:
        self._allow_private = allow_private
        self._resolve = resolver
        self._resolve_timeout_s = resolve_timeout_s

    async def where(self, url: str) -> tuple[rules.Target, list[str]]:
        """The URL's target and its checked addresses, or the refusal as ``WebhookUrlError``."""
        target = rules.target(url, allow_http=self._allow_private)
        try:
            addresses = await within(
                self._resolve(target.host, target.port), self._resolve_timeout_s
            )
        except TimeoutError:
            raise rules.WebhookUrlError(RESOLVE_TIMED_OUT) from None
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
    """The gateway's ``Sender``: each POST goes to an address ``targets`` checked, on a
    connection of its own."""

    def __init__(self, targets: WebhookTargets, *, timeout_s: float = 10.0) -> None:
        self._targets = targets
        self._client = httpx.AsyncClient(
            timeout=timeout_s,
            follow_redirects=False,
            trust_env=False,
            limits=LIMITS,
        )

    async def aclose(self) -> None:
        """Close the client."""
        await self._client.aclose()

    async def send(self, url: str, body: bytes, headers: Mapping[str, str]) -> Sent:
        """POST ``body`` to a checked address of ``url``'s host: the next one while
        connecting fails."""
        loop = asyncio.get_running_loop()
        started = loop.time()

        def sent(status: int | None, error: str | None) -> Sent:
            return Sent(status, error, int((loop.time() - started) * 1000))

        try:
            target, addresses = await self._targets.where(url)
        except rules.WebhookUrlError as exc:
            return sent(None, str(exc))
        error = "connection failed"
        for address in addresses:
            try:
                status = await self._post(httpx.URL(url), address, target, body, headers)
            except httpx.ConnectError as exc:
                error = f"connection failed: {type(exc).__name__}"
                continue
            except httpx.TimeoutException:
                return sent(None, "timeout")
            except httpx.HTTPError as exc:
                return sent(None, f"connection failed: {type(exc).__name__}")
            return sent(status, None if rules.is_success(status) else f"HTTP {status}")
        return sent(None, error)

    async def _post(
        self,
        given: httpx.URL,
        address: str,
        target: rules.Target,
        body: bytes,
        headers: Mapping[str, str],
    ) -> int:
        request_url = given.copy_with(host=address.split("%", 1)[0])
        extensions = {"sni_hostname": target.host} if target.scheme == "https" else {}
        sent_headers = {**headers, "Host": given.netloc.decode("ascii"), "Connection": "close"}
        async with self._client.stream(
            "POST", request_url, content=body, headers=sent_headers, extensions=extensions
        ) as response:
            return response.status_code
