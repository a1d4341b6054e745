"""The webhook_endpoints, webhook_deliveries and webhook_attempts tables."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime

import asyncpg

from gpux_gateway.adapters.postgres.repository import ConnectionRepository, OwnedTable
from gpux_gateway.webhooks.repository import (
    AttemptRow,
    DeliveryRow,
    DeliveryStatus,
    DueDelivery,
    EndpointRow,
    EndpointStatus,
    WebhookEvent,
)

# Take due deliveries of enabled endpoints (SKIP LOCKED: replicas share the queue), hold them
# until $3, and return them with their endpoint's URL and secret and their event. The endpoint
# is filtered before the LIMIT: a disabled endpoint's deliveries never take a batch's places.
_TAKE = """
WITH due AS (
    SELECT d.id FROM gateway.webhook_deliveries d
    JOIN gateway.webhook_endpoints e ON e.id = d.endpoint_id AND e.status = 'enabled'
    WHERE d.status = 'pending' AND d.next_attempt_at <= $1
    ORDER BY d.next_attempt_at LIMIT $2
    FOR UPDATE OF d SKIP LOCKED
), held AS (
    UPDATE gateway.webhook_deliveries d SET next_attempt_at = $3
    FROM due, gateway.webhook_endpoints e
    WHERE d.id = due.id AND e.id = d.endpoint_id AND e.status = 'enabled'
    RETURNING d.*, e.url, e.secret
)
SELECT d.*, a.type AS event_type,
       a.created_at AS event_created_at, a.data::text AS data
FROM held d JOIN gateway.account_events a ON a.id = d.event_id
ORDER BY d.next_attempt_at, d.id
"""


# Store an attempt's outcome if the delivery is as it was taken: the same attempts and still
# held ($11), or stopped since (NULL: its endpoint was disabled). Its next attempt stays NULL
# unless its endpoint is enabled (one disabled meanwhile keeps its deliveries stopped).
_RECORD = """
UPDATE gateway.webhook_deliveries d SET status = $2, attempts = $3, run_failures = $4,
    first_attempt_at = $5,
    next_attempt_at = CASE WHEN e.status = 'enabled' THEN $6::timestamptz END,
    last_attempt_at = $7, last_status = $8, last_error = $9
FROM gateway.webhook_endpoints e
WHERE d.id = $1 AND e.id = d.endpoint_id AND d.attempts = $10
  AND (d.next_attempt_at = $11 OR d.next_attempt_at IS NULL)
RETURNING d.id
"""


def _recorded(delivery: DeliveryRow, taken: DeliveryRow) -> tuple[object, ...]:
    return (
        delivery.id,
        delivery.status.value,
        delivery.attempts,
        delivery.run_failures,
        delivery.first_attempt_at,
        delivery.next_attempt_at,
        delivery.last_attempt_at,
        delivery.last_status,
        delivery.last_error,
        taken.attempts,
        taken.next_attempt_at,
    )


def _endpoint(row: asyncpg.Record) -> EndpointRow:
    return EndpointRow(
        **{
            **dict(row),
            "event_types": tuple(row["event_types"]),
            "status": EndpointStatus(row["status"]),
        }
    )


def _changeable(endpoint: EndpointRow) -> tuple[object, ...]:
    """The endpoint's columns from ``url`` to ``failing_since``: what may change after its
    creation, in the table's order."""
    return (
        endpoint.url,
        list(endpoint.event_types),
        endpoint.description,
        endpoint.secret,
        endpoint.status.value,
        endpoint.disabled_reason,
        endpoint.failing_since,
    )


ENDPOINTS = OwnedTable("gateway.webhook_endpoints", "account_id", _endpoint)


def _delivery(row: asyncpg.Record, history: Sequence[AttemptRow] = ()) -> DeliveryRow:
    return DeliveryRow(
        id=row["id"],
        endpoint_id=row["endpoint_id"],
        account_id=row["account_id"],
        event_id=row["event_id"],
        event_type=row["event_type"],
        status=DeliveryStatus(row["status"]),
        attempts=row["attempts"],
        run_failures=row["run_failures"],
        first_attempt_at=row["first_attempt_at"],
        next_attempt_at=row["next_attempt_at"],
        last_attempt_at=row["last_attempt_at"],
        last_status=row["last_status"],
        last_error=row["last_error"],
        created_at=row["created_at"],
        history=tuple(history),
    )


def _due(row: asyncpg.Record) -> DueDelivery:
    delivery = _delivery(row)
    event = WebhookEvent(
        id=delivery.event_id,
        type=delivery.event_type,
        created_at=row["event_created_at"],
        account_id=delivery.account_id,
        data=json.loads(row["data"]),
    )
    return DueDelivery(delivery=delivery, url=row["url"], secret=row["secret"], event=event)


class PostgresWebhooks(ConnectionRepository):
    """Webhook endpoints, their deliveries and the deliveries' attempts in ``gateway``."""

    async def add_endpoint(self, endpoint: EndpointRow) -> None:
        """Store a new endpoint."""
        await self._conn.execute(
            "INSERT INTO gateway.webhook_endpoints (id, account_id, url, event_types,"
            " description, secret, status, disabled_reason, failing_since, created_at,"
            " updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
            endpoint.id,
            endpoint.account_id,
            *_changeable(endpoint),
            endpoint.created_at,
            endpoint.updated_at,
        )

    async def endpoints_page(
        self, account_id: str, after: str | None, limit: int
    ) -> list[EndpointRow]:
        """Up to ``limit`` of the account's endpoints in id order, after the cursor id."""
        return await ENDPOINTS.page(self._conn, account_id, after, limit)

    async def endpoint(self, account_id: str, endpoint_id: str) -> EndpointRow | None:
        """One of the account's endpoints, or None."""
        return await ENDPOINTS.get(self._conn, account_id, endpoint_id)

    async def update_endpoint(self, endpoint: EndpointRow) -> None:
        """Store the endpoint's changes; stop or resume its pending deliveries by its status."""
        await self._conn.execute(
            "UPDATE gateway.webhook_endpoints SET url = $2, event_types = $3, description = $4,"
            " secret = $5, status = $6, disabled_reason = $7, failing_since = $8,"
            " updated_at = $9 WHERE id = $1",
            endpoint.id,
            *_changeable(endpoint),
            endpoint.updated_at,
        )
        if endpoint.status is EndpointStatus.DISABLED:
            await self._conn.execute(
                "UPDATE gateway.webhook_deliveries SET next_attempt_at = NULL"
                " WHERE endpoint_id = $1 AND status = 'pending'",
                endpoint.id,
            )
        else:
            await self._conn.execute(
                "UPDATE gateway.webhook_deliveries SET next_attempt_at = $2"
                " WHERE endpoint_id = $1 AND status = 'pending' AND next_attempt_at IS NULL",
                endpoint.id,
                endpoint.updated_at,
            )

    async def delete_endpoint(self, account_id: str, endpoint_id: str) -> bool:
        """Delete one of the account's endpoints and its deliveries; False if it has none."""
        return await ENDPOINTS.delete(self._conn, account_id, endpoint_id)

    async def _history(self, ids: list[str]) -> dict[str, list[AttemptRow]]:
        rows = await self._conn.fetch(
            "SELECT * FROM gateway.webhook_attempts WHERE delivery_id = ANY($1::text[])"
            " ORDER BY delivery_id, n",
            ids,
        )
        found: dict[str, list[AttemptRow]] = {i: [] for i in ids}
        for r in rows:
            found[r["delivery_id"]].append(AttemptRow(**dict(r)))
        return found

    async def deliveries_page(
        self, endpoint_id: str, before: str | None, limit: int
    ) -> list[DeliveryRow]:
        """Up to ``limit`` of the endpoint's deliveries, newest first, before the cursor id."""
        rows = await self._conn.fetch(
            "SELECT d.*, a.type AS event_type FROM gateway.webhook_deliveries d"
            " JOIN gateway.account_events a ON a.id = d.event_id"
            " WHERE d.endpoint_id = $1 AND ($2::text IS NULL OR d.id < $2)"
            " ORDER BY d.id DESC LIMIT $3",
            endpoint_id,
            before,
            limit,
        )
        history = await self._history([r["id"] for r in rows])
        return [_delivery(r, history[r["id"]]) for r in rows]

    async def delivery(self, endpoint_id: str, delivery_id: str) -> DeliveryRow | None:
        """One of the endpoint's deliveries, or None."""
        row = await self._conn.fetchrow(
            "SELECT d.*, a.type AS event_type FROM gateway.webhook_deliveries d"
            " JOIN gateway.account_events a ON a.id = d.event_id"
            " WHERE d.id = $1 AND d.endpoint_id = $2",
            delivery_id,
            endpoint_id,
        )
        if row is None:
            return None
        return _delivery(row, (await self._history([delivery_id]))[delivery_id])

    async def requeue(self, delivery_id: str, now: datetime) -> None:
        """Make the delivery pending and due ``now``, as a new run."""
        await self._conn.execute(
            "UPDATE gateway.webhook_deliveries SET status = 'pending', next_attempt_at = $2,"
            " run_failures = 0, first_attempt_at = NULL WHERE id = $1",
            delivery_id,
            now,
        )

    async def take_due(self, now: datetime, limit: int, hold_until: datetime) -> list[DueDelivery]:
        """Up to ``limit`` due deliveries of enabled endpoints, held until ``hold_until``."""
        return [_due(r) for r in await self._conn.fetch(_TAKE, now, limit, hold_until)]

    async def record_attempt(
        self, delivery: DeliveryRow, attempt: AttemptRow, *, taken: DeliveryRow
    ) -> bool:
        """Log the attempt and store the delivery's outcome, unless the delivery changed since
        it was ``taken`` (redelivered, or taken again); no next attempt unless its endpoint is
        enabled."""
        updated = await self._conn.fetchval(_RECORD, *_recorded(delivery, taken))
        if updated is None:
            return False
        await self._conn.execute(
            "INSERT INTO gateway.webhook_attempts (delivery_id, n, at, status, error,"
            " duration_ms) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING",
            attempt.delivery_id,
            attempt.n,
            attempt.at,
            attempt.status,
            attempt.error,
            attempt.duration_ms,
        )
        return True

    async def endpoint_succeeded(self, endpoint_id: str) -> None:
        """The endpoint's failing run, if any, is over."""
        await self._conn.execute(
            "UPDATE gateway.webhook_endpoints SET failing_since = NULL"
            " WHERE id = $1 AND failing_since IS NOT NULL",
            endpoint_id,
        )

    async def endpoint_failed(self, endpoint_id: str, now: datetime) -> EndpointRow | None:
        """The endpoint is failing since ``now`` unless it was already."""
        row = await self._conn.fetchrow(
            "UPDATE gateway.webhook_endpoints SET failing_since = coalesce(failing_since, $2)"
            " WHERE id = $1 RETURNING *",
            endpoint_id,
            now,
        )
        return None if row is None else _endpoint(row)
