"""What the sessions resource stores, and the repository that keeps it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol


@dataclass(frozen=True, slots=True)
class SessionRow:
    """A browser session: it stands for ``key_id`` until revoked or expired."""

    id: str
    account_id: str
    key_id: str
    digest: bytes
    user_agent: str
    created_at: datetime
    expires_at: datetime
    revoked_at: datetime | None


class SessionsRepository(Protocol):
    """The sessions table."""

    async def add(self, session: SessionRow) -> None:
        """Store a new session."""
        ...

    async def get(self, session_id: str) -> SessionRow | None:
        """A session by id, whoever's (authentication), or None."""
        ...

    async def active(self, account_id: str, now: datetime, limit: int) -> list[SessionRow]:
        """The account's sessions neither revoked nor expired at ``now``, newest first."""
        ...

    async def revoke(self, account_id: str, session_id: str, now: datetime) -> bool:
        """Revoke one of the account's sessions; False when it has no such live session."""
        ...
