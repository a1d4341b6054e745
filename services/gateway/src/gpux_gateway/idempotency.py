"""Idempotent creating requests: the same Idempotency-Key and body give the first response again.

The request's effect (rows, outbox messages) and its response are written in one
transaction, under an advisory lock on the key, so two concurrent requests with
one key create one thing and both get its response. A different body under a
used key is refused (422). Responses are kept ``idempotency_ttl_h`` hours.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Annotated, Any

import asyncpg
from fastapi import Header

from gpux_gateway.adapters import repository
from gpux_gateway.adapters.repository import StoredResponse
from gpux_platform.problems import ProblemError

HEADER = "Idempotency-Key"
PATTERN = r"^[\x21-\x7e]{1,255}$"
_VALID = re.compile(PATTERN)

IdemKey = Annotated[
    str | None,
    Header(
        alias=HEADER,
        pattern=PATTERN,
        description="Makes a retried POST safe: 1 to 255 visible ASCII characters.",
    ),
]
"""The optional Idempotency-Key header of a creating request."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """A creating request's response, and whether it was a replay."""

    status_code: int
    body: dict[str, Any]
    replayed: bool


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


Create = Callable[[asyncpg.Connection], Awaitable[tuple[int, dict[str, Any]]]]


async def run_once(
    pool: asyncpg.Pool,
    *,
    scope: str,
    key: str | None,
    print_: str,
    now: datetime,
    ttl: timedelta,
    create: Create,
) -> Outcome:
    """Run ``create`` in a transaction, once per (scope, key); replay its response after."""
    async with pool.acquire() as conn, conn.transaction():
        if key is None:
            status, body = await create(conn)
            return Outcome(status, body, replayed=False)
        await conn.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", f"{scope}\x1f{key}"
        )
        stored = await repository.find_response(conn, scope, key, now - ttl)
        if stored is not None:
            if stored.fingerprint != print_:
                raise ProblemError(
                    422,
                    "idempotency-key-reused",
                    "Idempotency-Key reused",
                    "this Idempotency-Key was used with a different request",
                )
            return Outcome(stored.status_code, stored.body, replayed=True)
        status, body = await create(conn)
        await repository.store_response(conn, scope, key, StoredResponse(print_, status, body), now)
        return Outcome(status, body, replayed=False)
