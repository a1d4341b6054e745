"""Idempotent creation in a unit of work: a request's effect (rows, outbox messages) and its
response are written in the request's unit of work, under a lock on its key, so two
concurrent requests with one key create one thing and both get its response. Responses are
kept ``idempotency_ttl_h`` hours (the rule itself: ``domain.idempotency``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Any, Protocol

from gpux_gateway.domain.idempotency import Once, Outcome, Replay, StoredResponse, replay
from gpux_platform.problems import ProblemError


class IdempotencyRepository(Protocol):
    """The idempotency table: responses of creating requests, per (scope, key)."""

    async def claim(self, scope: str, key: str, not_before: datetime) -> StoredResponse | None:
        """Hold (scope, key) until the unit of work ends, so one request at a time uses it,
        and return the response stored under it at ``not_before`` or later (one round trip)."""
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


Create = Callable[[], Awaitable[tuple[int, dict[str, Any]]]]
"""Makes what a request creates in the unit of work; returns its status and body."""


async def run_once(uow: UnitWithResponses, once: Once, create: Create) -> Outcome:
    """Run ``create`` once per (scope, key) in the unit of work; replay its response after."""
    if once.key is None:
        status, body = await create()
        return Outcome(status, body, replayed=False)
    stored = await uow.idempotency.claim(once.scope, once.key, uow.now - once.ttl)
    match replay(stored, once):
        case Replay.CONFLICT:
            raise ProblemError(
                422,
                "idempotency-key-reused",
                "Idempotency-Key reused",
                "this Idempotency-Key was used with a different request",
            )
        case Replay.REPLAY:
            assert stored is not None
            return Outcome(stored.status_code, stored.body, replayed=True)
    status, body = await create()
    response = StoredResponse(once.fingerprint, status, body)
    await uow.idempotency.store(once.scope, once.key, response, uow.now)
    return Outcome(status, body, replayed=False)
