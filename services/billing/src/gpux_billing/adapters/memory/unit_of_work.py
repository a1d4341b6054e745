"""Billing's fake unit of work: every repository in memory, committed or restored whole.

The service tests drive the handlers through it; the contract tests hold its repositories
to the PostgreSQL ones. ``refreshed`` records the wallets each commit would refresh in the
Redis read model (once per unit, like the real one).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from gpux_billing.adapters.memory.best_asks import MemoryBestAsks, Quote
from gpux_billing.adapters.memory.holds import MemoryHolds
from gpux_billing.adapters.memory.interruptions import MemoryPendingInterruptions
from gpux_billing.adapters.memory.leases import MemoryLeases, Stored
from gpux_billing.adapters.memory.ledger import MemoryLedger
from gpux_billing.adapters.memory.payouts import MemoryPayouts
from gpux_billing.adapters.memory.rates import MemoryRates
from gpux_billing.adapters.memory.reliability import Counts, MemoryReliability
from gpux_billing.adapters.memory.reports import MemoryPendingReports
from gpux_billing.adapters.memory.wallets import MemoryWallets
from gpux_billing.domain.fx import ToReference
from gpux_billing.domain.holds import Book, Hold
from gpux_billing.domain.interruptions import Pending
from gpux_billing.domain.ledger import Wallet
from gpux_billing.domain.payouts import Payout
from gpux_billing.domain.provisioning import PendingReport
from gpux_billing.domain.rules import Rules
from gpux_billing.domain.topups import Topup
from gpux_billing.service import flush, prepare
from gpux_billing.service.unit_of_work import Staged
from gpux_contracts.events import Envelope
from gpux_contracts.money import Currency
from gpux_platform.clock import Clock
from gpux_platform.unit_of_work import MemoryUnitOfWork


@dataclass
class BillingState:
    """Everything billing keeps, as plain objects (deep-copied at every unit's start)."""

    ledger: MemoryLedger = field(default_factory=MemoryLedger)
    topups: dict[str, Topup] = field(default_factory=dict)
    holds: dict[str, Hold] = field(default_factory=dict)
    leases: dict[str, Stored] = field(default_factory=dict)
    pending_interruptions: dict[str, Pending] = field(default_factory=dict)
    pending_reports: dict[str, PendingReport] = field(default_factory=dict)
    rates: dict[Currency, ToReference] = field(default_factory=dict)
    best_asks: dict[Book, Quote] = field(default_factory=dict)
    payouts: dict[str, Payout] = field(default_factory=dict)
    reliability: Counts = field(default_factory=Counts)


class MemoryBillingUnitOfWork(MemoryUnitOfWork):
    """The fake: enter it (``async with``) for each unit, as the real one is."""

    state: BillingState
    ledger: MemoryLedger
    wallets: MemoryWallets
    holds: MemoryHolds
    leases: MemoryLeases
    pending_interruptions: MemoryPendingInterruptions
    pending_reports: MemoryPendingReports
    rates: MemoryRates
    best_asks: MemoryBestAsks
    payouts: MemoryPayouts
    reliability: MemoryReliability

    def __init__(self, *, clock: Clock, rules: Rules | None = None) -> None:
        super().__init__(BillingState())
        self.clock = clock
        self.rules = rules or Rules()
        self.now: datetime = clock.now()
        self.touched: set[Wallet] = set()
        self.staged = Staged()
        self.refreshed: list[list[Wallet]] = []
        """The wallets each commit refreshed in the read model, one list per unit."""
        self._begun()

    def _begun(self) -> None:
        self.now = self.clock.now()
        self.touched = set()
        self.staged = Staged()
        state = self.state
        self.ledger = state.ledger
        self.wallets = MemoryWallets(state.topups)
        self.holds = MemoryHolds(state.holds)
        self.leases = MemoryLeases(state.leases)
        self.pending_interruptions = MemoryPendingInterruptions(state.pending_interruptions)
        self.pending_reports = MemoryPendingReports(state.pending_reports)
        self.rates = MemoryRates(state.rates)
        self.best_asks = MemoryBestAsks(state.best_asks)
        self.payouts = MemoryPayouts(state.payouts)
        self.reliability = MemoryReliability(state.reliability)

    async def claim(self, topic: str, events: Sequence[Envelope[Any]]) -> list[Envelope[Any]]:
        """Claim the events, then prepare them (locks, order funding, trades) as the
        entrypoint's batches do."""
        new = await super().claim(topic, events)
        await prepare(self, new)
        return new

    async def commit(self) -> None:
        """Write what the handlers staged (``service.flush``), then commit as the real unit does."""
        await flush(self)
        await super().commit()

    async def after_commit(self) -> None:
        """Record the wallets the read model would refresh now."""
        touched, self.touched = sorted(self.touched), set()
        if touched:
            self.refreshed.append(touched)

    async def rollback(self) -> None:
        """Restore the state the unit began with (and forget what it touched)."""
        await super().rollback()
        self.touched = set()
        self._begun()
