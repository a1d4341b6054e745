"""Billing's outbox rows written in one statement, however many (the settlement writes
thousands per transaction).

The rows are the ones ``gpux_common.outbox.add`` writes (event id, topic, key, JSON body,
headers), in the order given, and a replayed event id is skipped the same way; that function
sends one statement per row, this one an ``INSERT ... SELECT FROM unnest(...)`` that also
wakes the relay (``pg_notify``) in the same round trip.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import asyncpg

from gpux_common.broker import Outgoing, encode

_ADD = """
WITH added AS (
    INSERT INTO billing.outbox (event_id, topic, key, body, headers)
    SELECT m.event_id, m.topic, m.key, m.body, m.headers::jsonb
      FROM unnest($1::text[], $2::text[], $3::text[], $4::bytea[], $5::text[])
           WITH ORDINALITY AS m (event_id, topic, key, body, headers, n)
     ORDER BY m.n
    ON CONFLICT (event_id) DO NOTHING
)
SELECT pg_notify('billing_outbox', '')
"""


async def add(conn: asyncpg.Connection, messages: Sequence[Outgoing]) -> None:
    """Write messages to billing's outbox on this connection (inside its transaction)."""
    if not messages:
        return
    columns: tuple[list[str], list[str], list[str], list[bytes], list[str]] = (
        [],
        [],
        [],
        [],
        [],
    )
    ids, topics, keys, bodies, headers = columns
    for m in messages:
        envelope = m.envelope
        ids.append(envelope.event_id)
        topics.append(m.topic.name)
        keys.append(m.key)
        bodies.append(encode(envelope))
        carrier = envelope.trace.carrier() if envelope.trace else {}
        headers.append(json.dumps({**envelope.headers(), **carrier}))
    await conn.execute(_ADD, *columns)
