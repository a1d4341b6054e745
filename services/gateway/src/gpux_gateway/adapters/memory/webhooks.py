"""Webhook endpoints, deliveries and attempts in memory."""

from __future__ import annotations

import dataclasses
from datetime import datetime

from gpux_contracts.ids import new_id
from gpux_gateway.adapters.memory.state import OwnedRows, StateRepository
from gpux_gateway.webhooks.repository import (
    AttemptRow,
    DeliveryRow,
    DeliveryStatus,
    DueDelivery,
    EndpointRow,
    EndpointStatus,
    WebhookEvent,
)

ENDPOINTS = OwnedRows[EndpointRow](
    lambda s: s.webhook_endpoints, lambda e: e.account_id, "webhook endpoint"
)


class MemoryWebhooks(StateRepository):
    """Webhooks in ``GatewayState.webhook_endpoints`` / ``webhook_deliveries`` /
    ``webhook_attempts``; events are ``GatewayState.account_events``."""

    async def add_endpoint(self, endpoint: EndpointRow) -> None:
        """Store a new endpoint (its account must exist, like the foreign key)."""
        ENDPOINTS.add(self._state, endpoint)

    async def endpoints_page(
        self, account_id: str, after: str | None, limit: int
    ) -> list[EndpointRow]:
        """Up to ``limit`` of the account's endpoints in id order, after the cursor id."""
        return ENDPOINTS.page(self._state, account_id, after, limit)

    async def endpoint(self, account_id: str, endpoint_id: str) -> EndpointRow | None:
        """One of the account's endpoints, or None."""
        return ENDPOINTS.get(self._state, account_id, endpoint_id)

    async def update_endpoint(self, endpoint: EndpointRow) -> None:
        """Store the endpoint's changes; stop or resume its pending deliveries by its status."""
        self._state.webhook_endpoints[endpoint.id] = endpoint
        for d in self._pending_of(endpoint.id):
            if endpoint.status is EndpointStatus.DISABLED:
                self._put(dataclasses.replace(d, next_attempt_at=None))
            elif d.next_attempt_at is None:
                self._put(dataclasses.replace(d, next_attempt_at=endpoint.updated_at))

    def _pending_of(self, endpoint_id: str) -> list[DeliveryRow]:
        return [
            d
            for d in self._state.webhook_deliveries.values()
            if d.endpoint_id == endpoint_id and d.status is DeliveryStatus.PENDING
        ]

    def _put(self, delivery: DeliveryRow) -> None:
        self._state.webhook_deliveries[delivery.id] = delivery

    async def delete_endpoint(self, account_id: str, endpoint_id: str) -> bool:
        """Delete one of the account's endpoints and its deliveries; False if it has none."""
        if not ENDPOINTS.delete(self._state, account_id, endpoint_id):
            return False
        for d in list(self._state.webhook_deliveries.values()):
            if d.endpoint_id == endpoint_id:
                del self._state.webhook_deliveries[d.id]
                self._state.webhook_attempts.pop(d.id, None)
        return True

    def _shown(self, delivery: DeliveryRow) -> DeliveryRow:
        history = tuple(self._state.webhook_attempts.get(delivery.id, []))
        return dataclasses.replace(delivery, history=history)

    async def deliveries_page(
        self, endpoint_id: str, before: str | None, limit: int
    ) -> list[DeliveryRow]:
        """Up to ``limit`` of the endpoint's deliveries, newest first, before the cursor id."""
        theirs = sorted(
            (
                d
                for d in self._state.webhook_deliveries.values()
                if d.endpoint_id == endpoint_id and (before is None or d.id < before)
            ),
            key=lambda d: d.id,
            reverse=True,
        )
        return [self._shown(d) for d in theirs[:limit]]

    async def delivery(self, endpoint_id: str, delivery_id: str) -> DeliveryRow | None:
        """One of the endpoint's deliveries, or None."""
        d = self._state.webhook_deliveries.get(delivery_id)
        return self._shown(d) if d is not None and d.endpoint_id == endpoint_id else None

    async def requeue(self, delivery_id: str, now: datetime) -> None:
        """Make the delivery pending and due ``now``, as a new run."""
        d = self._state.webhook_deliveries[delivery_id]
        self._put(
            dataclasses.replace(
                d,
                status=DeliveryStatus.PENDING,
                next_attempt_at=now,
                run_failures=0,
                first_attempt_at=None,
            )
        )

    def enqueue(self, event: WebhookEvent, now: datetime) -> list[str]:
        """What the recorder does in PostgreSQL (its memory twin keeps no deliveries): one
        pending delivery per enabled endpoint of the account subscribed to the event's type;
        returns their ids. For tests."""
        added = []
        for e in self._state.webhook_endpoints.values():
            subscribed = event.type in e.event_types or "*" in e.event_types
            if e.account_id != event.account_id or e.status is not EndpointStatus.ENABLED:
                continue
            if not subscribed or any(
                d.endpoint_id == e.id and d.event_id == event.id
                for d in self._state.webhook_deliveries.values()
            ):
                continue
            d = DeliveryRow(
                id=new_id(),
                endpoint_id=e.id,
                account_id=event.account_id,
                event_id=event.id,
                event_type=event.type,
                status=DeliveryStatus.PENDING,
                attempts=0,
                run_failures=0,
                first_attempt_at=None,
                next_attempt_at=now,
                last_attempt_at=None,
                last_status=None,
                last_error=None,
                created_at=now,
            )
            self._put(d)
            self._state.webhook_events[event.id] = event
            added.append(d.id)
        return added

    async def take_due(self, now: datetime, limit: int, hold_until: datetime) -> list[DueDelivery]:
        """Up to ``limit`` due deliveries of enabled endpoints, held until ``hold_until``."""
        endpoints = self._state.webhook_endpoints
        due = sorted(
            (
                d
                for d in self._state.webhook_deliveries.values()
                if d.status is DeliveryStatus.PENDING
                and d.next_attempt_at is not None
                and d.next_attempt_at <= now
                and endpoints[d.endpoint_id].status is EndpointStatus.ENABLED
            ),
            key=lambda d: (d.next_attempt_at or now, d.id),
        )[:limit]
        taken = []
        for d in due:
            endpoint = endpoints[d.endpoint_id]
            held = dataclasses.replace(d, next_attempt_at=hold_until)
            self._put(held)
            event = self._state.webhook_events[d.event_id]
            taken.append(DueDelivery(held, endpoint.url, endpoint.secret, event))
        return taken

    async def record_attempt(
        self, delivery: DeliveryRow, attempt: AttemptRow, *, taken: DeliveryRow
    ) -> bool:
        """Log the attempt and store the delivery's outcome, unless the delivery changed since
        it was ``taken`` (redelivered, or taken again); no next attempt unless its endpoint is
        enabled."""
        now = self._state.webhook_deliveries.get(delivery.id)
        if (
            now is None
            or now.attempts != taken.attempts
            or now.next_attempt_at not in (taken.next_attempt_at, None)
        ):
            return False
        endpoint = self._state.webhook_endpoints.get(delivery.endpoint_id)
        if endpoint is None or endpoint.status is not EndpointStatus.ENABLED:
            delivery = dataclasses.replace(delivery, next_attempt_at=None)
        log = self._state.webhook_attempts.setdefault(delivery.id, [])
        if all(a.n != attempt.n for a in log):
            log.append(attempt)
        self._put(dataclasses.replace(delivery, history=()))
        return True

    async def endpoint_succeeded(self, endpoint_id: str) -> None:
        """The endpoint's failing run, if any, is over."""
        e = self._state.webhook_endpoints.get(endpoint_id)
        if e is not None:
            self._state.webhook_endpoints[e.id] = dataclasses.replace(e, failing_since=None)

    async def endpoint_failed(self, endpoint_id: str, now: datetime) -> EndpointRow | None:
        """The endpoint is failing since ``now`` unless it was already."""
        e = self._state.webhook_endpoints.get(endpoint_id)
        if e is None:
            return None
        e = dataclasses.replace(e, failing_since=e.failing_since or now)
        self._state.webhook_endpoints[e.id] = e
        return e
