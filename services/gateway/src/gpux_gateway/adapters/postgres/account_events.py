"""The account_events table, and the webhook deliveries queued with each event."""

from __future__ import annotations

import json

import asyncpg

from gpux_contracts.ids import new_id
from gpux_gateway.notifications.events import AccountEvent

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
