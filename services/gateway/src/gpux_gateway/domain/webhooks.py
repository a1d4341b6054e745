"""Webhooks' rules: which URLs and addresses an endpoint may target, the retry schedule of a
delivery, and when an endpoint that keeps failing is disabled.

Pure: the caller gives the instant, the addresses a host resolved to, and the jitter.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from urllib.parse import urlsplit

ALL_EVENTS = "*"
"""An endpoint subscribed to ``*`` hears every event type."""
KEY_PREFIX = "whsec_"
"""What an endpoint's signing secret starts with."""
MAX_URL_LENGTH = 2048
MAX_EVENT_TYPES = 64
JITTER = 0.1
"""Each retry's delay is moved by up to ±10 %, so failed deliveries do not retry in step."""
BLOCKED_ADDRESS = "blocked address"
"""The error of an attempt whose host resolved to an address webhooks may not reach."""

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")


class WebhookUrlError(ValueError):
    """Why a URL cannot be a webhook endpoint's (a 422 on ``url``)."""


@dataclass(frozen=True, slots=True)
class Target:
    """Where a webhook URL points: what is resolved and connected to."""

    scheme: str
    host: str
    port: int


def target(url: str, *, allow_http: bool) -> Target:
    """The target of an endpoint URL, or a ``WebhookUrlError``: an absolute https URL (http
    too when ``allow_http``), with a host, no user or password, no fragment."""
    if len(url) > MAX_URL_LENGTH:
        raise WebhookUrlError(f"a webhook URL is at most {MAX_URL_LENGTH} characters")
    if any(ch.isspace() or ord(ch) < 0x20 or ord(ch) == 0x7F for ch in url):
        raise WebhookUrlError("the URL holds spaces or control characters")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise WebhookUrlError("not a valid URL") from None
    schemes = ("https", "http") if allow_http else ("https",)
    if parts.scheme not in schemes:
        raise WebhookUrlError("the URL must be https" + (" or http" if allow_http else ""))
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        raise WebhookUrlError("the URL must not hold a user name or password")
    if not parts.hostname:
        raise WebhookUrlError("the URL has no host")
    if parts.fragment:
        raise WebhookUrlError("the URL must not hold a fragment")
    default = 443 if parts.scheme == "https" else 80
    return Target(parts.scheme, parts.hostname, port if port is not None else default)


def _embedded_v4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one carries (mapped, NAT64, 6to4, Teredo), if any."""
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]
    return None


def is_blocked(address: IPAddress) -> bool:
    """Whether webhooks may not reach ``address``: anything but a public unicast address
    (loopback, private, shared, link-local, multicast, reserved, unspecified, site-local,
    documentation, and IPv6 forms carrying such an IPv4 address)."""
    if isinstance(address, ipaddress.IPv6Address):
        if address.is_site_local:
            return True
        embedded = _embedded_v4(address)
        if embedded is not None and is_blocked(embedded):
            return True
        if embedded is not None and address.ipv4_mapped is not None:
            return False
    return (
        address.is_loopback
        or address.is_private
        or address.is_link_local
        or address.is_multicast
        or address.is_reserved
        or address.is_unspecified
        or not address.is_global
    )


def blocked_among(addresses: Iterable[str]) -> str | None:
    """The first address (as resolved, text) webhooks may not reach, or None when every one is
    public; an unparsable address counts as blocked."""
    for text in addresses:
        try:
            address = ipaddress.ip_address(text.split("%", 1)[0])
        except ValueError:
            return text
        if is_blocked(address):
            return text
    return None


def event_types_error(types: Sequence[str], known: Iterable[str]) -> str | None:
    """Why ``types`` cannot be an endpoint's subscription (None when it can): at least one,
    each a known type or ``*``."""
    if not types:
        return "subscribe to at least one event type (or '*' for every type)"
    if len(types) > MAX_EVENT_TYPES:
        return f"at most {MAX_EVENT_TYPES} event types"
    allowed = set(known) | {ALL_EVENTS}
    unknown = sorted({t for t in types if t not in allowed})
    if unknown:
        return f"unknown event types: {', '.join(unknown)}; known: {', '.join(sorted(allowed))}"
    return None


def subscription(types: Sequence[str]) -> tuple[str, ...]:
    """The stored subscription: ``("*",)`` when it holds ``*``, else the types, once each, in
    the order given."""
    if ALL_EVENTS in types:
        return (ALL_EVENTS,)
    return tuple(dict.fromkeys(types))


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How a failed delivery is retried: ``base_s`` doubling per failure up to ``cap_s``,
    until ``retry_for`` after its first attempt; an endpoint failing without a success for
    ``retry_for`` is disabled."""

    base_s: float = 30.0
    cap_s: float = 6 * 3600.0
    retry_for: timedelta = timedelta(hours=72)


def backoff(failures: int, policy: RetryPolicy, jitter: float) -> timedelta:
    """The delay after the ``failures``-th failure in a row (1 for the first):
    ``base * 2**(failures-1)``, capped, moved by ``jitter`` (in [-1, 1]) times 10 %."""
    if failures < 1:
        raise ValueError("backoff after at least one failure")
    exponent = min(failures - 1, 64)
    delay = min(policy.base_s * 2.0**exponent, policy.cap_s)
    moved = delay * (1.0 + JITTER * max(-1.0, min(1.0, jitter)))
    return timedelta(seconds=moved)


def next_attempt(
    first_attempt_at: datetime, now: datetime, failures: int, policy: RetryPolicy, jitter: float
) -> datetime | None:
    """When a delivery that just failed (its ``failures``-th failure of the run) is tried next,
    or None when that is past ``retry_for`` after its first attempt: it has failed."""
    due = now + backoff(failures, policy, jitter)
    return due if due <= first_attempt_at + policy.retry_for else None


def endpoint_gives_up(
    failing_since: datetime,
    now: datetime,
    policy: RetryPolicy,
    given_up_run: datetime | None = None,
) -> bool:
    """Whether an endpoint failing since ``failing_since`` with no success is disabled now:
    it failed for ``retry_for``, or a delivery whose run began at ``given_up_run`` (at or
    after ``failing_since``) just failed for good — nothing succeeded all through its run."""
    if now - failing_since >= policy.retry_for:
        return True
    return given_up_run is not None and failing_since <= given_up_run


def disabled_reason(failing_since: datetime, policy: RetryPolicy) -> str:
    """What a disabled endpoint shows of why."""
    hours = policy.retry_for.total_seconds() / 3600
    return (
        f"no successful delivery for {hours:g} h (failing since {failing_since.isoformat()});"
        " re-enable it with PATCH status=enabled"
    )


def is_success(status: int | None) -> bool:
    """A receiver's 2xx answer."""
    return status is not None and 200 <= status < 300
