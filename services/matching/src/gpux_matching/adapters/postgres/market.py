"""Market sessions (``matching.market_state``): the latest state per scope.

``*`` is every GPU model, anything else one GPU id; no row means open. A unit of work reads
the halted scopes once, on its first question, and answers the rest of its questions from
them: the unit decides as of one moment.
"""

from __future__ import annotations

import asyncpg

from gpux_contracts.market import ALL_GPUS, MarketState, MarketStateChanged


class PostgresMarketStates:
    """Market states on one connection (inside the caller's transaction)."""

    def __init__(self, conn: asyncpg.Connection) -> None:
        self.conn = conn
        self._halted: frozenset[str] | None = None

    async def record(self, changed: MarketStateChanged) -> None:
        """Keep the latest state per scope (an older change than the one stored is ignored)."""
        await self.conn.execute(
            """
            INSERT INTO matching.market_state (scope, state, reason, changed_at)
            VALUES ($1, $2, $3, $4)
            ON CONFLICT (scope) DO UPDATE
                SET state = EXCLUDED.state, reason = EXCLUDED.reason,
                    changed_at = EXCLUDED.changed_at
                WHERE matching.market_state.changed_at <= EXCLUDED.changed_at
            """,
            changed.scope,
            changed.state.value,
            changed.reason,
            changed.changed_at,
        )
        self._halted = None

    async def halted(self, gpu: str) -> bool:
        """True while the whole market or this GPU model is halted (no row: open)."""
        if self._halted is None:
            rows = await self.conn.fetch(
                "SELECT scope FROM matching.market_state WHERE state = $1",
                MarketState.HALTED.value,
            )
            self._halted = frozenset(row["scope"] for row in rows)
        return ALL_GPUS in self._halted or gpu in self._halted
