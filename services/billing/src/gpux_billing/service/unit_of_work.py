"""What billing's handlers receive: its repositories, the inbox, the outbox, the unit's time.

Two implementations: ``adapters.postgres.unit_of_work.PostgresBillingUnitOfWork`` (one
PostgreSQL transaction; every SQL statement lives in ``adapters/postgres``) and
``adapters.memory.unit_of_work.MemoryBillingUnitOfWork`` (plain objects, for the service
tests). The contract tests in ``tests/contract`` hold both to the same behaviour.

Repositories never commit: the unit does, once, with the inbox claim and the outbox rows.
``staged`` holds what a batch's handlers decided, the order funding (``service.orders``),
the leases its trades open (``service.leases``) and the lease outcomes that count for sellers'
reliability (``service.reliability``): the unit writes it set-based when it commits
(``service.flush``), before the outbox, as it writes the outbox in one insert.
``touched`` collects the wallets whose balances the unit changed; the Redis read model
refreshes them once the unit committed (``after_commit``), never before.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from decimal import Decimal
from typing import Any, Protocol

from gpux_billing.domain.audit import Audit
from gpux_billing.domain.funding import Funding
from gpux_billing.domain.fx import ToReference
from gpux_billing.domain.holds import Ask, Hold
from gpux_billing.domain.interruptions import Pending
from gpux_billing.domain.leases import Lease, State, Terms
from gpux_billing.domain.ledger import AccountKey, Transfer, Wallet
from gpux_billing.domain.payouts import Payout
from gpux_billing.domain.posting import Posted
from gpux_billing.domain.provisioning import PendingReport
from gpux_billing.domain.reliability import Counted, Outcome
from gpux_billing.domain.rules import Rules
from gpux_billing.domain.statements import Balance, StatementPage
from gpux_billing.domain.topups import Topup
from gpux_contracts.events import Envelope
from gpux_contracts.money import Currency
from gpux_contracts.prices import BestAskChanged
from gpux_platform.unit_of_work import UnitOfWork


class Ledger(Protocol):
    """The double-entry ledger: posting (all or nothing, replays are no-ops) and reading."""

    async def post(self, transfer: Transfer, *, isolated: bool = False) -> Posted:
        """Post one transfer; an identical replay returns the original (``replayed``).

        Raises ``TransferMismatch`` when the id was posted with other fields and
        ``InsufficientFunds`` when a floored balance would go below zero. ``isolated``: a
        refusal leaves the unit of work usable (PostgreSQL: a savepoint); without it a
        refused single transfer may leave the unit only good for a rollback.
        """
        ...

    async def post_many(
        self, transfers: Sequence[Transfer], *, isolated: bool = False
    ) -> list[Posted]:
        """Post a batch, all or nothing; results in the order given.

        A refused batch of several transfers always leaves the unit usable.
        """
        ...

    async def get(self, transfer_id: str) -> Transfer | None:
        """A posted transfer, or None."""
        ...

    async def balance(self, account: AccountKey) -> int:
        """An account's balance in micro-units (0 for an account never used)."""
        ...

    async def balances(self, owner: str) -> list[Balance]:
        """Every account of an owner, ordered by currency and kind."""
        ...

    async def wallet_balances(self, wallets: Sequence[Wallet]) -> dict[Wallet, tuple[int, int]]:
        """(available, held) micro-units of each wallet (0 for an account never used)."""
        ...

    async def lock_available(self, wallets: Iterable[Wallet]) -> dict[Wallet, int]:
        """Lock the wallets' available balances for this unit (in key order); 0 if none yet."""
        ...

    async def lock_owners(self, owners: Sequence[str]) -> None:
        """Lock every available balance of these owners for this unit, in key order."""
        ...

    async def wallets(self) -> list[Wallet]:
        """Every wallet that has an available or a held account."""
        ...

    async def statement(
        self, owner: str, currency: Currency, cursor: int | None = None, limit: int = 50
    ) -> StatementPage:
        """An owner's entries in one currency (all its kinds), newest first, paginated."""
        ...

    async def verify(self) -> Audit:
        """Recompute every balance from the entries and check every invariant."""
        ...


class Wallets(Protocol):
    """Top-ups: requests, confirmations, and whether they were booked."""

    async def topup(self, topup_id: str) -> Topup | None:
        """A top-up, locked for this unit, or None."""
        ...

    async def record_request(self, topup: Topup, at: datetime) -> Topup:
        """Record a requested top-up (keeping a confirmation that came first); returns it as
        stored (the earlier request when one with this id came before)."""
        ...

    async def record_confirmation(self, topup_id: str, at: datetime) -> Topup:
        """Mark a top-up confirmed (a placeholder when its request has not come yet)."""
        ...

    async def set_status(
        self, topup_id: str, status: str, reason: str | None, at: datetime
    ) -> None:
        """Move a top-up to ``booked`` or ``rejected``."""
        ...


class Holds(Protocol):
    """The holds placed for orders."""

    async def get(self, order_id: str) -> Hold | None:
        """The hold of an order, locked for this unit, or None."""
        ...

    async def get_many(self, order_ids: Sequence[str]) -> dict[str, Hold]:
        """The holds of these orders (those that have one), locked for this unit in key order."""
        ...

    async def add_many(self, holds: Sequence[tuple[Hold, datetime]]) -> None:
        """Remember the holds placed for orders, each with when it was placed (once per order:
        a hold already stored stands)."""
        ...

    async def record_releases(self, releases: Sequence[tuple[str, int, datetime]]) -> None:
        """Add to what has been released of orders' holds: (order id, micro-units, when)."""
        ...

    async def set_leased_gpus(self, leased_gpus: Mapping[str, int]) -> None:
        """Record how many of each order's GPUs took their share of its hold into leases."""
        ...


class Leases(Protocol):
    """Leases, their terms and billing state, and when each is next due."""

    async def add(self, lease: Lease) -> bool:
        """Store a new lease; False when it exists already (a replayed trade)."""
        ...

    async def add_many(self, leases: Sequence[Lease]) -> None:
        """Store new leases (one already stored stands: a replayed trade)."""
        ...

    async def existing(self, lease_ids: Sequence[str]) -> set[str]:
        """Which of these leases were opened already (by their trades' ids)."""
        ...

    async def get(self, lease_id: str) -> Lease | None:
        """A lease, locked for this unit, or None."""
        ...

    async def lock(self, lease_ids: Sequence[str]) -> None:
        """Lock these leases for this unit, in key order (unknown ones are passed over)."""
        ...

    async def due(self, now: datetime, limit: int) -> list[Lease]:
        """Running leases due by ``now``, oldest first, locked (others' locked ones skipped)."""
        ...

    async def save(self, changed: Sequence[tuple[Terms, State]]) -> None:
        """Write the states of settled leases back (and when each is next due); of a lease
        made ready, its terms' new start (``ready_at``) and end too."""
        ...

    async def postpone(self, lease_ids: Sequence[str], until: datetime) -> None:
        """Make running leases due again no sooner than ``until`` (nothing else changes)."""
        ...


class PendingInterruptions(Protocol):
    """The book's interruptions of leases billing has not opened yet, by lease id."""

    async def keep(self, pending: Pending) -> bool:
        """Keep an interruption for its lease; False when one is kept already (it stands)."""
        ...

    async def take(self, lease_ids: Sequence[str]) -> dict[str, Pending]:
        """Remove and return the interruptions kept for these leases."""
        ...


class PendingReports(Protocol):
    """Sellers' reports (ready, failed) of leases billing has not opened yet, by lease id."""

    async def keep(self, report: PendingReport) -> bool:
        """Keep a report for its lease; False when one is kept already (the first stands)."""
        ...

    async def take(self, lease_ids: Sequence[str]) -> dict[str, PendingReport]:
        """Remove and return the reports kept for these leases."""
        ...


class Payouts(Protocol):
    """Sellers' payouts, by payout id."""

    async def get(self, payout_id: str) -> Payout | None:
        """A payout, locked for this unit, or None."""
        ...

    async def add(self, payout: Payout) -> bool:
        """Store a decided payout; False when one with its id is stored already (it stands)."""
        ...

    async def save(self, payout: Payout) -> None:
        """Write a payout's new status (its reason, reference, who decided, when)."""
        ...


class Rates(Protocol):
    """The latest FX rate of each currency into the reference currency."""

    async def all(self) -> dict[Currency, ToReference]:
        """Every rate billing holds."""
        ...

    async def record(self, rate: ToReference) -> None:
        """Keep a rate unless a newer one is held (``gpux_contracts.fx.supersedes``)."""
        ...


class BestAsks(Protocol):
    """The market's best asks, for holding market orders without a cap."""

    async def record(self, change: BestAskChanged) -> None:
        """Keep a book's best ask unless a newer one is held."""
        ...

    async def best_many(self, asks: Iterable[Ask]) -> dict[Ask, Decimal | None]:
        """The cheapest best ask each order could take, per GPU-hour in its currency (None:
        nothing offered), by (gpu, tier, region, currency); one read for all."""
        ...


class Reliability(Protocol):
    """Sellers' reliability: counts per offer, and what each lease has counted."""

    async def count(self, outcomes: Sequence[Outcome], at: datetime) -> Counted:
        """Count the outcomes (distinct, in order) whose lease has not counted their kind yet,
        as counted ``at``; returns those it counted, with their offers' counts and their
        sellers' (summed over all their offers) as they stand after, read in this unit.

        Units that count for one seller take turns (PostgreSQL: a lock per seller, in key
        order, held to the commit), so the seller's counts one reads include what the other
        committed: the last to count always announces the seller's whole counts.
        """
        ...


@dataclass
class Staged:
    """What a unit's handlers decided, written set-based when the unit commits.

    ``funding`` is what the batch's orders and trades were decided from (read once per unit
    by ``service.orders.prepare`` and ``service.leases.prepare``), ``opened`` which of its
    trades' leases exist (read, or opened by the unit); the rest is what those decisions
    write, each with the event that caused it (its trace): the hold and release transfers,
    the holds placed, the releases recorded, the leases opened, the hold shares they took
    (leased GPUs by order), the wallets to announce (each with the last event that
    changed it), and the lease outcomes to count (``service.reliability``, each with the
    event that decided it).
    """

    funding: Funding = field(default_factory=Funding)
    opened: dict[str, bool] = field(default_factory=dict)
    transfers: list[tuple[Transfer, Envelope[Any]]] = field(default_factory=list)
    holds: list[tuple[Hold, datetime]] = field(default_factory=list)
    releases: list[tuple[str, int, datetime]] = field(default_factory=list)
    leases: list[tuple[Lease, Envelope[Any]]] = field(default_factory=list)
    leased_gpus: dict[str, int] = field(default_factory=dict)
    wallets: dict[Wallet, Envelope[Any] | None] = field(default_factory=dict)
    outcomes: list[tuple[Outcome, Envelope[Any] | None]] = field(default_factory=list)

    def take(self) -> Staged:
        """The writes staged so far, to flush; this keeps only what was read and decided."""
        taken = replace(self)
        self.transfers, self.holds, self.releases = [], [], []
        self.leases, self.leased_gpus, self.wallets = [], {}, {}
        self.outcomes = []
        return taken


class BillingUnitOfWork(UnitOfWork, Protocol):
    """Everything a billing handler may use; one unit is one transaction."""

    @property
    def ledger(self) -> Ledger:
        """The double-entry ledger."""
        ...

    @property
    def wallets(self) -> Wallets:
        """Top-ups."""
        ...

    @property
    def holds(self) -> Holds:
        """Order holds."""
        ...

    @property
    def leases(self) -> Leases:
        """Leases."""
        ...

    @property
    def pending_interruptions(self) -> PendingInterruptions:
        """Interruptions waiting for their leases' trades."""
        ...

    @property
    def pending_reports(self) -> PendingReports:
        """Sellers' reports waiting for their leases' trades."""
        ...

    @property
    def payouts(self) -> Payouts:
        """Sellers' payouts."""
        ...

    @property
    def rates(self) -> Rates:
        """FX rates into the reference currency."""
        ...

    @property
    def reliability(self) -> Reliability:
        """Sellers' reliability counts."""
        ...

    @property
    def best_asks(self) -> BestAsks:
        """The market's best asks."""
        ...

    @property
    def rules(self) -> Rules:
        """The operator's settings the handlers apply."""
        ...

    @property
    def now(self) -> datetime:
        """The unit's time, read from the clock once when it began."""
        ...

    @property
    def staged(self) -> Staged:
        """What this unit's handlers decided and it writes when it commits."""
        ...

    @property
    def touched(self) -> set[Wallet]:
        """Wallets whose balances this unit changed (their read model follows the commit)."""
        ...
