"""The account_events table, and the webhook deliveries queued with each event."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from datetime import datetime
from typing import Any

import asyncpg

from gpux_contracts.ids import new_id
from gpux_gateway.notifications.cursor import Cursor, Snapshot
from gpux_gateway.notifications.events import AccountEvent
from gpux_gateway.notifications.log import Logged
from gpux_gateway.notifications.types import AccountEventType

log = logging.getLogger("gpux.gateway.notifications")

CHANNEL = "gateway_account_events"
"""What the recorder notifies (at its commit) and the streams listen on."""

# One statement: the events (a recorded id is passed over), one pending delivery per enabled
# endpoint of the event's account subscribed to its type or to '*', and the notification of
# the streams. A delivery's id is a ULID: the first 10 characters (its instant) of a fresh one
# per event, then 16 of the md5 of that and the endpoint (hex is Crockford base32 too), so
# the deliveries of one event to many endpoints differ and still sort by time.
RECORD = """
WITH given AS (
    SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::timestamptz[],
                         $6::text[])
        WITH ORDINALITY AS g (id, account_id, type, data, created_at, ulid, n)
), events AS (
    INSERT INTO gateway.account_events (id, account_id, type, data, created_at)
    SELECT id, account_id, type, data::jsonb, created_at FROM given ORDER BY n
    ON CONFLICT (id) DO NOTHING
    RETURNING id, account_id, type, created_at
), deliveries AS (
    INSERT INTO gateway.webhook_deliveries
        (id, endpoint_id, account_id, event_id, status, next_attempt_at, created_at)
    SELECT 'whd_' || left(g.ulid, 10) || upper(left(md5(g.ulid || w.id), 16)),
           w.id, e.account_id, e.id, 'pending', e.created_at, e.created_at
    FROM events e
    JOIN given g ON g.id = e.id
    JOIN gateway.webhook_endpoints w
      ON w.account_id = e.account_id AND w.status = 'enabled'
     AND (e.type = ANY (w.event_types) OR '*' = ANY (w.event_types))
    ON CONFLICT (endpoint_id, event_id) DO NOTHING
)
SELECT pg_notify('gateway_account_events', '') WHERE EXISTS (SELECT 1 FROM events)
"""


class PostgresAccountEvents:
    """Account events in ``gateway.account_events``: recorded at the unit's commit."""

    def __init__(self, conn: asyncpg.Connection) -> None:
        self._conn = conn
        self._pending: list[AccountEvent] = []

    async def record(self, *events: AccountEvent) -> None:
        """Keep the events for the commit (``flush``)."""
        self._pending.extend(events)

    async def flush(self) -> None:
        """Record every event kept, with their deliveries, in one statement (none: nothing)."""
        events, self._pending = self._pending, []
        if not events:
            return
        await self._conn.execute(
            RECORD,
            [e.id for e in events],
            [e.account_id for e in events],
            [e.type.value for e in events],
            [json.dumps(e.data, separators=(",", ":")) for e in events],
            [e.created_at for e in events],
            [new_id() for _ in events],
        )

    async def purge(self, before: datetime, limit: int) -> int:
        """Delete up to ``limit`` events created before ``before`` with no delivery pending
        (and their finished deliveries, whose attempts go with them); returns how many."""
        status = await self._conn.execute(PURGE, before, limit)
        return int(str(status).split()[-1])


# A row's txid is its writing transaction's. Rows are read in (txid, seq) order, and only
# those whose transaction is older than the oldest one still running (the snapshot's xmin):
# those are all committed (or rolled back, and never seen). A transaction still running, or
# one that starts later, has a txid at or above that xmin, so no row can ever appear before
# a cursor handed out: a stream that resumes after it misses nothing. (Ordering by seq alone
# would not do: a transaction that took a seq earlier may commit after a later one.)
AFTER = """
SELECT txid::text AS txid, seq, id, account_id, type, data::text AS data, created_at
FROM gateway.account_events
WHERE account_id = $1 AND (txid, seq) > ($2::text::xid8, $3::bigint)
  AND txid < pg_snapshot_xmin(pg_current_snapshot())
ORDER BY txid, seq
LIMIT $4
"""

NOW = "SELECT pg_current_snapshot()::text"

PURGE = """
WITH old AS (
    SELECT e.id FROM gateway.account_events e
    WHERE e.created_at < $1
      AND NOT EXISTS (
          SELECT 1 FROM gateway.webhook_deliveries d
          WHERE d.event_id = e.id AND d.status = 'pending')
    ORDER BY e.created_at
    LIMIT $2
    FOR UPDATE SKIP LOCKED  -- another process purging at once takes other rows
), deliveries AS (
    DELETE FROM gateway.webhook_deliveries WHERE event_id IN (SELECT id FROM old)
)
DELETE FROM gateway.account_events WHERE id IN (SELECT id FROM old)
"""

RECONNECT_S = 1.0
"""How long the follower waits before it listens again after losing its connection."""


def _logged(row: asyncpg.Record) -> Logged:
    data: dict[str, Any] = json.loads(row["data"])
    event = AccountEvent(
        row["id"], row["account_id"], AccountEventType(row["type"]), data, row["created_at"]
    )
    return Logged(Cursor(int(row["txid"]), row["seq"]), event)


class PostgresAccountEventsLog:
    """The account events as streams read them, on the pool (no transaction held open)."""

    def __init__(self, pool: asyncpg.Pool, reconnect_s: float = RECONNECT_S) -> None:
        self._pool = pool
        self._reconnect_s = reconnect_s

    async def after(self, account_id: str, cursor: Cursor, limit: int) -> list[Logged]:
        """Up to ``limit`` of the account's readable events after ``cursor``, in order."""
        rows = await self._pool.fetch(AFTER, account_id, str(cursor.txid), cursor.seq, limit)
        return [_logged(r) for r in rows]

    async def now(self) -> Snapshot:
        """Which transactions have committed now (the database's current snapshot)."""
        return Snapshot.parse(await self._pool.fetchval(NOW))

    async def follow(self, wake: Callable[[], None]) -> None:
        """``LISTEN`` on one pooled connection and ``wake`` at each notification (and once
        on each reconnect: what was recorded meanwhile is read), until cancelled."""
        while True:
            try:
                await self._listen(wake)
            except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as exc:
                log.warning("account events unheard; listening again", extra={"error": repr(exc)})
            await asyncio.sleep(self._reconnect_s)

    async def _listen(self, wake: Callable[[], None]) -> None:
        lost = asyncio.Event()

        def heard(*_: object) -> None:
            wake()

        async with self._pool.acquire() as conn:
            conn.add_termination_listener(lambda _conn: lost.set())
            await conn.add_listener(CHANNEL, heard)
            try:
                wake()
                await lost.wait()
            finally:
                if not conn.is_closed():
                    await conn.remove_listener(CHANNEL, heard)
