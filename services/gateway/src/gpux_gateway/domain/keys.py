"""API key format and digests (pure: randomness and the pepper come in as arguments).

A key reads ``gpx_<key id>_<secret>``. The key id is public (it names the key in
listings); the secret is 32 random bytes, base64url. Only HMAC-SHA256(pepper,
secret) is stored. When a key is created under an Idempotency-Key, its secret is
derived from the pepper and that key instead of drawn at random, so a replay can
return the identical response without the secret ever being stored.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

P = TypeVar("P")

PREFIX = "gpx"


class TokenFormat(Generic[P]):
    """A credential that reads ``<prefix>_<id>_<secret>``: the id of ``key_id_from_bytes``
    (16 lowercase base32 characters), the secret of ``secret_from_bytes`` (43 base64url
    ones). API keys and session cookies both are; the prefix tells them apart."""

    def __init__(self, prefix: str, parsed: Callable[[str, str], P]) -> None:
        self.prefix = prefix
        self._parsed = parsed
        self._pattern = re.compile(rf"^{prefix}_([0-9a-z]{{16}})_([A-Za-z0-9_-]{{43}})$")

    def format(self, token_id: str, secret: str) -> str:
        """The token as the client holds it."""
        return f"{self.prefix}_{token_id}_{secret}"

    def parse(self, token: str) -> P | None:
        """The id and secret of a presented token, or None when it is not of this format."""
        match = self._pattern.match(token)
        return None if match is None else self._parsed(match.group(1), match.group(2))


@dataclass(frozen=True, slots=True)
class ParsedKey:
    """The two parts of a presented key."""

    key_id: str
    secret: str


_KEY = TokenFormat(PREFIX, ParsedKey)


def format_key(key_id: str, secret: str) -> str:
    """The key as the client sees it."""
    return _KEY.format(key_id, secret)


def parse_key(token: str) -> ParsedKey | None:
    """Split a presented key, or None when it is not one of ours."""
    return _KEY.parse(token)


def secret_from_bytes(raw: bytes) -> str:
    """A secret from 32 bytes (random, or derived)."""
    if len(raw) != 32:
        raise ValueError("a secret is 32 bytes")
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def key_id_from_bytes(raw: bytes) -> str:
    """A 16-character lowercase key id from at least 10 bytes."""
    return base64.b32encode(raw[:10]).decode().lower()


def digest(pepper: bytes, secret: str) -> bytes:
    """What is stored for a secret."""
    return hmac.new(pepper, secret.encode(), hashlib.sha256).digest()


def matches(pepper: bytes, secret: str, stored: bytes) -> bool:
    """Whether a presented secret matches the stored digest (constant time)."""
    return hmac.compare_digest(digest(pepper, secret), stored)


def derived_material(pepper: bytes, *parts: str) -> bytes:
    """64 deterministic bytes for a key created under an idempotency key (id and secret)."""
    label = "\x1f".join(("gpux-api-key", *parts)).encode()
    first = hmac.new(pepper, label + b"\x01", hashlib.sha256).digest()
    second = hmac.new(pepper, label + b"\x02", hashlib.sha256).digest()
    return first + second
