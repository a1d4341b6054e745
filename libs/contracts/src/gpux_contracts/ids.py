"""Identifiers: ULIDs (unique, sortable by creation time) as strings."""

from __future__ import annotations

import hashlib
import uuid

from ulid import ULID


def new_id() -> str:
    """A fresh ULID string: unique and lexicographically sortable by time."""
    return str(ULID())


def stable_id(*parts: str) -> str:
    """A deterministic id derived from its parts (e.g. an idempotency key), as a UUIDv5 string."""
    digest = hashlib.sha256("\x1f".join(parts).encode()).digest()
    return str(uuid.UUID(bytes=digest[:16], version=5))
