"""Everything the memory unit of work holds, as plain (deep-copyable) objects."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol, TypeVar

from gpux_gateway.accounts.repository import AccountRow
from gpux_gateway.domain.idempotency import StoredResponse
from gpux_gateway.handoff.repository import LeaseAccessRow
from gpux_gateway.keys.repository import KeyRow
from gpux_gateway.leases.repository import LeaseRow, LedgerLineRow
from gpux_gateway.notifications.events import AccountEvent
from gpux_gateway.offers.repository import OfferRow
from gpux_gateway.orders.repository import FillRow, OrderRow
from gpux_gateway.payouts.repository import PayoutRow
from gpux_gateway.sessions.repository import SessionRow
from gpux_gateway.ssh_keys.repository import SshKeyRow
from gpux_gateway.webhooks.repository import AttemptRow, DeliveryRow, EndpointRow, WebhookEvent


@dataclass
class GatewayState:
    """The gateway schema's tables, in memory."""

    accounts: dict[str, AccountRow] = field(default_factory=dict)
    keys: dict[str, KeyRow] = field(default_factory=dict)
    ssh_keys: dict[str, SshKeyRow] = field(default_factory=dict)
    sessions: dict[str, SessionRow] = field(default_factory=dict)
    offers: dict[str, OfferRow] = field(default_factory=dict)
    orders: dict[str, OrderRow] = field(default_factory=dict)
    fills: dict[str, FillRow] = field(default_factory=dict)
    leases: dict[str, LeaseRow] = field(default_factory=dict)
    ledger: dict[tuple[str, str, str, str], LedgerLineRow] = field(default_factory=dict)
    """By (transfer id, owner, currency, account kind), as the table's unique key."""
    lease_access: dict[str, LeaseAccessRow] = field(default_factory=dict)
    lease_reports: dict[tuple[str, str], datetime] = field(default_factory=dict)
    """By (lease id, report kind): when it was reported."""
    payouts: dict[str, PayoutRow] = field(default_factory=dict)
    responses: dict[tuple[str, str], tuple[StoredResponse, datetime]] = field(default_factory=dict)
    account_events: dict[str, AccountEvent] = field(default_factory=dict)
    """By id, in the order recorded."""
    webhook_endpoints: dict[str, EndpointRow] = field(default_factory=dict)
    webhook_deliveries: dict[str, DeliveryRow] = field(default_factory=dict)
    webhook_attempts: dict[str, list[AttemptRow]] = field(default_factory=dict)
    """By delivery id, oldest first."""
    webhook_events: dict[str, WebhookEvent] = field(default_factory=dict)
    """The events of the deliveries ``MemoryWebhooks.enqueue`` queued."""
    sequence: int = 0
    """The last ``seq`` given to a fill or a statement line (PostgreSQL's bigserial)."""

    def next_seq(self) -> int:
        """The next sequence number."""
        self.sequence += 1
        return self.sequence


class _Identified(Protocol):
    @property
    def id(self) -> str: ...


R = TypeVar("R", bound=_Identified)


def id_page(rows: Iterable[R], after: str | None, limit: int) -> list[R]:
    """Up to ``limit`` rows in id order after the cursor id (None: from the first), as the
    tables' keyset pages give them (``id > $cursor ORDER BY id LIMIT $limit``)."""
    return sorted((r for r in rows if after is None or r.id > after), key=lambda r: r.id)[:limit]
