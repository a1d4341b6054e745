"""What the leases resource stores: leases and statement lines, as billing's events tell them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Protocol

from gpux_contracts.capacity import LeaseInterruptionNoticed
from gpux_contracts.leases import (
    LeaseCharged,
    LeaseEnded,
    LeaseLowBalance,
    LeaseOpened,
    LeaseReady,
    LedgerPosted,
)
from gpux_contracts.settlement import LeaseCharges


@dataclass(frozen=True, slots=True)
class LeaseRow:
    """A lease as both parties' view stores it (money in micro-units).

    Until ``opened`` (its ``lease.opened`` was read) the fields only that event carries are
    None and the lease is not shown. ``status`` is what was read (``provisioning`` from an
    opening with a deadline until its ``lease.ready``, ``running``, then ``ended`` or
    ``failed``); what the parties see is ``domain.leases.status_of`` it.
    """

    id: str
    opened: bool
    order_id: str | None
    offer_id: str | None
    buyer_id: str
    seller_id: str | None
    gpu: str | None
    tier: str | None
    gpus: int | None
    price_micros: int | None
    currency: str | None
    wallet_currency: str | None
    billing: str | None
    hours: int | None
    started_at: datetime | None
    ends_at: datetime | None
    status: str
    end_reason: str | None
    ended_at: datetime | None
    unpaid_micros: int
    low_balance_at: datetime | None
    period: int | None
    charged_through: datetime | None
    total_charged_micros: int
    total_paid_micros: int
    total_fee_micros: int
    total_seller_micros: int
    updated_at: datetime
    interrupt_at: datetime | None = None
    """When an interruption notice says the lease ends (None: none read)."""
    interruption_cause: str | None = None
    """Why: ``preempted`` or ``reclaimed``."""
    interruption_noticed_at: datetime | None = None
    """When the book decided the interruption."""
    provisioning_deadline: datetime | None = None
    """When the seller must have posted access (None: ready at ``started_at``)."""
    ready_at: datetime | None = None
    """When a provisioning lease became ready (its ``lease.ready``): charged from then."""
    failure: str | None = None
    """Why a ``failed`` lease never became ready: ``seller_reported`` or
    ``provisioning_timeout``."""
    failure_detail: str = ""
    """The seller's words, with ``seller_reported``."""


@dataclass(frozen=True, slots=True)
class LedgerLineRow:
    """One line of an account's statement: one entry of a transfer billing posted."""

    seq: int
    transfer_id: str
    owner: str
    currency: str
    account_kind: str
    transfer_kind: str
    amount_micros: int
    created_at: datetime
    reference: str
    fx_rate: Decimal | None
    fx_base: str | None
    fx_quote: str | None
    fx_rate_at: datetime | None


@dataclass(frozen=True, slots=True)
class LeaseFilter:
    """Which of an account's leases a listing shows: those on ``role``'s side (None: both
    sides) in ``status`` (None: any) as ``domain.leases.lease_status`` tells it at the
    listing's instant."""

    account_id: str
    role: str | None = None
    status: str | None = None


@dataclass(frozen=True, slots=True)
class Earnings:
    """A seller's takings in one currency, in micro-units."""

    currency: str
    gross_micros: int
    fee_micros: int
    net_micros: int
    leases: int
    running: int


class LeasesRepository(Protocol):
    """The leases table.

    Every writer is an upsert that is safe in any order and under replay: what an event
    carries is kept, totals follow the highest ``period`` read (``domain.leases``), and an
    ended lease stays ended. Writers are applied when the unit of work commits, in the order
    given; nothing in the same unit reads them back.
    """

    async def get(self, account_id: str, lease_id: str) -> LeaseRow | None:
        """A lease the account rents or provides (anyone else's is None, like a missing one)."""
        ...

    async def page(
        self, which: LeaseFilter, *, after: str | None, limit: int, now: datetime
    ) -> list[LeaseRow]:
        """Up to ``limit`` of the leases ``which`` shows at ``now`` (a lease that starts later
        is scheduled), in id order, after the cursor lease."""
        ...

    async def current(self, lease_id: str) -> LeaseRow | None:
        """The lease as this unit leaves it so far, whoever's it is: unlike the other reads,
        it sees what this unit's writers queued before it (they are written first)."""
        ...

    async def earnings(self, seller_id: str) -> list[Earnings]:
        """Per offer currency: the sums of the running totals of the leases the account sells."""
        ...

    async def apply_opened(self, opened: LeaseOpened, now: datetime) -> None:
        """Record what a lease is (its status and totals stay whatever later events made them)."""
        ...

    async def apply_charged(self, charged: LeaseCharged, now: datetime) -> None:
        """Take a charge's running totals (a charge read before its lease.opened keeps them)."""
        ...

    async def apply_settled(self, charges: Sequence[LeaseCharges], now: datetime) -> None:
        """Take each lease's running totals after its charges, exactly as ``apply_charged``
        takes a ``lease.charged``'s."""
        ...

    async def apply_low_balance(self, warning: LeaseLowBalance, now: datetime) -> None:
        """Note when the buyer's funds first ran low for this lease."""
        ...

    async def apply_notice(self, notice: LeaseInterruptionNoticed, now: datetime) -> None:
        """Note when, why and at what instant the lease is interrupted (the first notice read
        stays; a notice read before the lease's opening keeps its parties)."""
        ...

    async def apply_ready(self, ready: LeaseReady, now: datetime) -> None:
        """Note when a provisioning lease became ready, and run it (the first ``ready_at``
        read stays, with its ``ends_at``, which its opening then keeps; an ended or failed
        lease stays so; one read before the lease's opening makes its row, which its opening
        then leaves running)."""
        ...

    async def apply_ended(self, ended: LeaseEnded, now: datetime) -> None:
        """End the lease for good (the first end read stays: ``failed`` for reason failed,
        with its failure and detail, else ``ended``) and take its final totals."""
        ...


class LedgerRepository(Protocol):
    """The ledger_lines table (written when the unit of work commits, in the order given)."""

    async def add_posted(self, posted: LedgerPosted) -> None:
        """Keep each line of a posted transfer once (a replayed transfer adds nothing)."""
        ...

    async def page(
        self, owner: str, *, currency: str | None, before: int | None, limit: int
    ) -> list[LedgerLineRow]:
        """Up to ``limit`` of the account's lines, newest first, before the cursor line."""
        ...
