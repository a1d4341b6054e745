"""Everything the memory unit of work holds, as plain (deep-copyable) objects."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Generic, Protocol, TypeVar

from gpux_contracts.reliability import ReliabilityCounts
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
    offer_reliability: dict[str, tuple[str, ReliabilityCounts]] = field(default_factory=dict)
    """By offer id: its seller's id and its counts."""
    seller_reliability: dict[str, ReliabilityCounts] = field(default_factory=dict)
    """By seller id: its counts over all its offers."""
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


class StateRepository:
    """A repository on the memory unit's tables (built anew for each unit)."""

    def __init__(self, state: GatewayState) -> None:
        self._state = state


class OwnedRows(Generic[R]):
    """One of the state's tables (``table`` picks it) whose rows are owned by the account
    ``owner`` reads from each, with the PostgreSQL tables' rules: an account sees only its own
    rows (another account's is missing, like one never stored), and a new row needs a new id
    and an existing account."""

    def __init__(
        self,
        table: Callable[[GatewayState], dict[str, R]],
        owner: Callable[[R], str],
        what: str,
    ) -> None:
        self._table = table
        self._owner = owner
        self._what = what

    def add(self, state: GatewayState, row: R) -> None:
        """Store a new row (a used id or a missing owner is refused, like the keys)."""
        rows, owner_id = self._table(state), self._owner(row)
        if row.id in rows or owner_id not in state.accounts:
            raise ValueError(f"{self._what} {row.id}: exists, or no account {owner_id}")
        rows[row.id] = row

    def get(self, state: GatewayState, owner_id: str, row_id: str) -> R | None:
        """The owner's row under ``row_id``, or None."""
        row = self._table(state).get(row_id)
        return row if row is not None and self._owner(row) == owner_id else None

    def of(self, state: GatewayState, owner_id: str) -> list[R]:
        """The owner's rows, as stored."""
        return [r for r in self._table(state).values() if self._owner(r) == owner_id]

    def page(self, state: GatewayState, owner_id: str, after: str | None, limit: int) -> list[R]:
        """Up to ``limit`` of the owner's rows in id order, after the cursor id."""
        return id_page(self.of(state, owner_id), after, limit)

    def delete(self, state: GatewayState, owner_id: str, row_id: str) -> bool:
        """Delete the owner's row under ``row_id``; False when it has no such row."""
        if self.get(state, owner_id, row_id) is None:
            return False
        del self._table(state)[row_id]
        return True
