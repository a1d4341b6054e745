"""Browser sessions in memory."""

from __future__ import annotations

import dataclasses
from datetime import datetime

from gpux_gateway.adapters.memory.state import OwnedRows, StateRepository
from gpux_gateway.sessions.repository import SessionRow

SESSIONS = OwnedRows[SessionRow](lambda s: s.sessions, lambda s: s.account_id, "session")


class MemorySessions(StateRepository):
    """Sessions in ``GatewayState.sessions``."""

    async def add(self, session: SessionRow) -> None:
        """Store a new session (its account must exist, like the foreign key)."""
        SESSIONS.add(self._state, session)

    async def get(self, session_id: str) -> SessionRow | None:
        """A session by id, whoever's, or None."""
        return self._state.sessions.get(session_id)

    async def active(self, account_id: str, now: datetime, limit: int) -> list[SessionRow]:
        """The account's sessions neither revoked nor expired at ``now``, newest first."""
        live = [
            s
            for s in self._state.sessions.values()
            if s.account_id == account_id and s.revoked_at is None and s.expires_at > now
        ]
        return sorted(live, key=lambda s: (s.created_at, s.id), reverse=True)[:limit]

    async def revoke(self, account_id: str, session_id: str, now: datetime) -> bool:
        """Revoke one of the account's live sessions; False when it has no such session."""
        session = self._state.sessions.get(session_id)
        if session is None or session not in await self.active(
            account_id, now, len(self._state.sessions)
        ):
            return False
        self._state.sessions[session_id] = dataclasses.replace(session, revoked_at=now)
        return True
