"""Idempotent creating requests: the same Idempotency-Key and body give the first response again.

The request's effect (rows, outbox messages) and its response are written in the request's
unit of work, under a lock on the key, so two concurrent requests with one key create one
thing and both get its response. A different body under a used key is refused (422).
Responses are kept ``idempotency_ttl_h`` hours.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Protocol

from gpux_platform.problems import ProblemError

PATTERN = r"^[\x21-\x7e]{1,255}$"
"""What an Idempotency-Key may be: 1 to 255 visible ASCII characters."""
_VALID = re.compile(PATTERN)


@dataclass(frozen=True, slots=True)
class StoredResponse:
    """A response kept for replays."""

    fingerprint: str
    status_code: int
    body: dict[str, Any]


class IdempotencyRepository(Protocol):
    """The idempotency table: responses of creating requests, per (scope, key)."""

    async def lock(self, scope: str, key: str) -> None:
        """Hold (scope, key) until the unit of work ends, so one request at a time uses it."""
        ...

    async def find(self, scope: str, key: str, not_before: datetime) -> StoredResponse | None:
        """The stored response under the key, if it was stored at ``not_before`` or later."""
        ...

    async def store(self, scope: str, key: str, response: StoredResponse, now: datetime) -> None:
        """Keep a response for replays (replacing an expired one under the same key)."""
        ...

    async def purge(self, before: datetime) -> int:
        """Forget responses stored before ``before``; returns how many."""
        ...


class UnitWithResponses(Protocol):
    """What idempotent creation needs of a unit of work."""

    now: datetime

    @property
    def idempotency(self) -> IdempotencyRepository:
        """Responses of creating requests."""
        ...


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


Create = Callable[[], Awaitable[tuple[int, dict[str, Any]]]]
"""Makes what a request creates in the unit of work; returns its status and body."""


def check_key(key: str | None) -> str | None:
    """The header's value if it is a usable key (1 to 255 visible ASCII characters)."""
    if key is None:
        return None
    if not _VALID.match(key):
        raise ProblemError(
            400,
            "bad-idempotency-key",
            "Bad Idempotency-Key",
            "use 1 to 255 visible ASCII characters",
        )
    return key


def fingerprint(method: str, path: str, canonical_body: str) -> str:
    """What identifies a request's content: method, path and its validated body."""
    return hashlib.sha256(f"{method}\x1f{path}\x1f{canonical_body}".encode()).hexdigest()


async def run_once(uow: UnitWithResponses, once: Once, create: Create) -> Outcome:
    """Run ``create`` once per (scope, key) in the unit of work; replay its response after."""
    if once.key is None:
        status, body = await create()
        return Outcome(status, body, replayed=False)
    await uow.idempotency.lock(once.scope, once.key)
    stored = await uow.idempotency.find(once.scope, once.key, uow.now - once.ttl)
    if stored is not None:
        if stored.fingerprint != once.fingerprint:
            raise ProblemError(
                422,
                "idempotency-key-reused",
                "Idempotency-Key reused",
                "this Idempotency-Key was used with a different request",
            )
        return Outcome(stored.status_code, stored.body, replayed=True)
    status, body = await create()
    response = StoredResponse(once.fingerprint, status, body)
    await uow.idempotency.store(once.scope, once.key, response, uow.now)
    return Outcome(status, body, replayed=False)
