"""Browser sessions: the cookie's format, its digest and the CSRF token (pure: randomness
and the pepper come in as arguments).

A session cookie reads ``gps_<session id>_<secret>``; only HMAC-SHA256(pepper, secret) is
stored, as for API keys. The CSRF token is derived from the secret (HMAC under a label of
its own), so it needs no storage, differs per session and cannot be computed from the
session id: a page of another origin can neither read the cookie nor forge the token.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from dataclasses import dataclass

from gpux_gateway.domain import keys

SESSION_COOKIE = "gpux_session"
"""HttpOnly: the page's JavaScript never sees it."""
CSRF_COOKIE = "gpux_csrf"
"""Readable by the page, which echoes it in ``CSRF_HEADER`` on every write."""
CSRF_HEADER = "X-CSRF-Token"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
"""Methods that change nothing: no CSRF token needed."""
PREFIX = "gps"


@dataclass(frozen=True, slots=True)
class ParsedSession:
    """The two parts of a presented session cookie."""

    session_id: str
    secret: str


_COOKIE = keys.TokenFormat(PREFIX, ParsedSession)
"""A cookie reads as an API key does, with a prefix of its own."""


def format_cookie(session_id: str, secret: str) -> str:
    """The cookie's value."""
    return _COOKIE.format(session_id, secret)


def parse_cookie(value: str) -> ParsedSession | None:
    """Split a presented cookie, or None when it is not one of ours."""
    return _COOKIE.parse(value)


def new_session(raw: bytes) -> ParsedSession:
    """A session's id and secret from 42 random bytes."""
    if len(raw) != 42:
        raise ValueError("a session is made of 42 random bytes")
    return ParsedSession(keys.key_id_from_bytes(raw[:10]), keys.secret_from_bytes(raw[10:]))


def digest(pepper: bytes, secret: str) -> bytes:
    """What is stored for a session's secret."""
    return keys.digest(pepper, secret)


def matches(pepper: bytes, secret: str, stored: bytes) -> bool:
    """Whether a presented secret matches the stored digest (constant time)."""
    return keys.matches(pepper, secret, stored)


def csrf_token(pepper: bytes, secret: str) -> str:
    """The session's CSRF token."""
    mac = hmac.new(pepper, b"gpux-csrf\x1f" + secret.encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(mac).decode().rstrip("=")


def csrf_ok(pepper: bytes, secret: str, presented: str | None) -> bool:
    """Whether a write carries the session's CSRF token (constant time)."""
    if not presented:
        return False
    return hmac.compare_digest(csrf_token(pepper, secret).encode(), presented.encode())
