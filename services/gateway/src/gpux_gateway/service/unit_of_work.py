"""The gateway's unit of work: its repositories, the inbox and the outbox, and its instant."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from datetime import datetime
from typing import Protocol

from gpux_gateway.accounts.repository import AccountsRepository
from gpux_gateway.handoff.repository import LeaseAccessRepository
from gpux_gateway.keys.repository import KeysRepository
from gpux_gateway.leases.repository import LeasesRepository, LedgerRepository
from gpux_gateway.notifications.repository import AccountEventsRepository
from gpux_gateway.offers.repository import OffersRepository
from gpux_gateway.orders.repository import OrdersRepository
from gpux_gateway.payouts.repository import PayoutsRepository
from gpux_gateway.reliability.repository import ReliabilityRepository
from gpux_gateway.service.idempotency import IdempotencyRepository
from gpux_gateway.sessions.repository import SessionsRepository
from gpux_gateway.ssh_keys.repository import SshKeysRepository
from gpux_gateway.webhooks.repository import WebhooksRepository
from gpux_platform.unit_of_work import UnitOfWork


class GatewayUnitOfWork(UnitOfWork, Protocol):
    """What a request or a batch of consumed events works through (one transaction)."""

    now: datetime
    """The instant the unit began: what its changes are stamped with."""

    @property
    def accounts(self) -> AccountsRepository:
        """Accounts."""
        ...

    @property
    def keys(self) -> KeysRepository:
        """API key digests."""
        ...

    @property
    def ssh_keys(self) -> SshKeysRepository:
        """Buyers' SSH public keys."""
        ...

    @property
    def sessions(self) -> SessionsRepository:
        """Browser sessions."""
        ...

    @property
    def offers(self) -> OffersRepository:
        """The sellers' view of their offers."""
        ...

    @property
    def orders(self) -> OrdersRepository:
        """The buyers' view of their orders and fills."""
        ...

    @property
    def leases(self) -> LeasesRepository:
        """Both parties' view of their leases."""
        ...

    @property
    def ledger(self) -> LedgerRepository:
        """Accounts' statement lines."""
        ...

    @property
    def lease_access(self) -> LeaseAccessRepository:
        """Leases' sealed access details and the sellers' reports sent."""
        ...

    @property
    def payouts(self) -> PayoutsRepository:
        """Sellers' payouts."""
        ...

    @property
    def reliability(self) -> ReliabilityRepository:
        """Billing's reliability counts of offers and sellers."""
        ...

    @property
    def idempotency(self) -> IdempotencyRepository:
        """Responses of creating requests, for replays."""
        ...

    @property
    def account_events(self) -> AccountEventsRepository:
        """Each account's own events (with their webhook deliveries), recorded at the commit."""
        ...

    @property
    def webhooks(self) -> WebhooksRepository:
        """Accounts' webhook endpoints, their deliveries and attempts."""
        ...


UnitOfWorkFactory = Callable[[], AbstractAsyncContextManager[GatewayUnitOfWork]]
"""Opens a unit of work: ``async with factory() as uow``."""
