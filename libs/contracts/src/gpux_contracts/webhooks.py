"""Webhook signatures: how gpux signs a delivery and how a receiver checks it.

The header ``Gpux-Signature`` carries ``t=<unix seconds>,v1=<hex HMAC-SHA256>``; the HMAC's key is
the endpoint's secret and its message is ``f"{t}."`` followed by the raw request body. During a
secret rotation a header may carry several ``v1`` values; one match is enough. Pure stdlib, so a
receiver can copy this file.
"""

from __future__ import annotations

import hashlib
import hmac

SIGNATURE_HEADER = "Gpux-Signature"
EVENT_ID_HEADER = "Gpux-Event-Id"
DEFAULT_TOLERANCE_S = 300


class SignatureError(ValueError):
    """The signature header is malformed, matches no secret, or is outside the time tolerance."""


def _digest(secret: str, body: bytes, timestamp: int) -> str:
    message = f"{timestamp}.".encode() + body
    return hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()


def sign(secret: str, body: bytes, timestamp: int) -> str:
    """The ``Gpux-Signature`` header value for ``body`` sent at ``timestamp`` (unix seconds)."""
    return f"t={timestamp},v1={_digest(secret, body, timestamp)}"


def _parse(header: str) -> tuple[int, list[str]]:
    timestamp: int | None = None
    signatures: list[str] = []
    for part in header.split(","):
        key, sep, value = part.strip().partition("=")
        if not sep or not value:
            raise SignatureError("malformed signature header")
        if key == "t":
            if timestamp is not None or not (value.isascii() and value.isdigit()):
                raise SignatureError("malformed signature timestamp")
            timestamp = int(value)
        elif key == "v1":
            signatures.append(value)
    if timestamp is None:
        raise SignatureError("signature header has no timestamp")
    if not signatures:
        raise SignatureError("signature header has no v1 signature")
    return timestamp, signatures


def verify(
    secret: str, header: str, body: bytes, *, now: int, tolerance_s: int = DEFAULT_TOLERANCE_S
) -> None:
    """Check ``header`` against ``body``; raise :class:`SignatureError` unless genuine and fresh.

    ``now`` is the receiver's clock (unix seconds); a timestamp more than ``tolerance_s`` older or
    newer than it is refused, so a captured request cannot be replayed later.
    """
    timestamp, signatures = _parse(header)
    if abs(now - timestamp) > tolerance_s:
        raise SignatureError("signature timestamp outside the tolerance")
    expected = _digest(secret, body, timestamp)
    matched = False
    for candidate in signatures:
        matched |= hmac.compare_digest(candidate.encode(), expected.encode())
    if not matched:
        raise SignatureError("no signature matches")
