"""Idempotent creating requests (pure): the same Idempotency-Key and content give the first
response again; the same key with other content is refused.

A request is known by its key in a scope (the account, or ``anonymous`` for sign-ups) and by
the fingerprint of its content (method, path and validated body). The service layer
(``service.idempotency``) stores responses and runs a request's effect at most once.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from datetime import timedelta
from enum import StrEnum
from typing import Any

PATTERN = r"^[\x21-\x7e]{1,255}$"
"""What an Idempotency-Key may be: 1 to 255 visible ASCII characters."""
_VALID = re.compile(PATTERN)


@dataclass(frozen=True, slots=True)
class StoredResponse:
    """A response kept for replays."""

    fingerprint: str
    status_code: int
    body: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Once:
    """What makes a creating request idempotent: its key in a scope, and its content."""

    scope: str
    key: str | None
    fingerprint: str
    ttl: timedelta


@dataclass(frozen=True, slots=True)
class Outcome:
    """A creating request's response, and whether it was a replay."""

    status_code: int
    body: dict[str, Any]
    replayed: bool


class Replay(StrEnum):
    """What a request under a used key gets."""

    NEW = "new"
    """Nothing kept under the key: the request makes its effect."""
    REPLAY = "replay"
    """The same content again: the kept response, and no second effect."""
    CONFLICT = "conflict"
    """Other content under the key: refused."""


def is_usable_key(key: str) -> bool:
    """Whether a header value can be an Idempotency-Key (1 to 255 visible ASCII characters)."""
    return _VALID.match(key) is not None


def fingerprint(method: str, path: str, canonical_body: str) -> str:
    """What identifies a request's content: method, path and its validated body."""
    return hashlib.sha256(f"{method}\x1f{path}\x1f{canonical_body}".encode()).hexdigest()


def replay(stored: StoredResponse | None, once: Once) -> Replay:
    """What a request gets, given the response kept under its key (if any)."""
    if stored is None:
        return Replay.NEW
    return Replay.REPLAY if stored.fingerprint == once.fingerprint else Replay.CONFLICT
