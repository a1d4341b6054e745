"""Leases: what a trade becomes in billing, and the ledger lines billing posts.

Billing produces every event here on ``billing.leases`` (key: lease id, so one lease's events
stay in order) and ``billing.ledger`` (key: transfer id); the gateway builds the buyers' and
sellers' views from them (``GET /v1/leases``, ``/v1/ledger``, ``/v1/accounts/me/earnings``).
Amounts are decimal strings. A lease's id is the id of the trade that opened it.

Every lease event carries the lease's running totals (``total_*``), so a reader keeps the
latest by ``period`` and never adds anything up itself: a replayed or reordered event cannot
count twice.
"""

from __future__ import annotations

from decimal import Decimal
from enum import StrEnum
from typing import ClassVar

from pydantic import AwareDatetime, BaseModel, Field

from gpux_contracts.base import FrozenModel
from gpux_contracts.events import Payload
from gpux_contracts.money import Currency, DecimalAmount
from gpux_contracts.offers import BillingGranularity


class LeaseEndReason(StrEnum):
    """Why a lease ended."""

    STOPPED = "stopped"
    """The buyer stopped it (``POST /v1/leases/{id}/stop``)."""
    COMPLETED = "completed"
    """Its fixed length (``hours``) ran out."""
    INSUFFICIENT_FUNDS = "insufficient_funds"
    """The buyer's wallet could not cover the next period (a ``lease.low_balance`` came first)."""
    INTERRUPTED = "interrupted"
    """An interruptible lease reached its ``interrupt_at`` (a ``lease.interruption_notice``
    came first): preempted by an on-demand buyer or reclaimed by the seller."""
    FAILED = "failed"
    """It never became ready: the seller reported a failure, or the offer's provisioning
    timeout passed first (``failure`` says which). Nothing was charged; the whole prepayment
    was released."""


class LeaseFailure(StrEnum):
    """Why a lease failed before it became ready."""

    SELLER_REPORTED = "seller_reported"
    """The seller said the machines cannot be delivered (``POST /v1/leases/{id}/failure``)."""
    PROVISIONING_TIMEOUT = "provisioning_timeout"
    """No access was posted by the lease's ``provisioning_deadline``."""


class LeaseStatus(StrEnum):
    """Where a lease is in its life.

    ``provisioning`` (the seller is setting the machines up; nothing is charged) -> ``running``
    from ``ready_at`` (the seller posted access) ... -> ``ended``; or ``provisioning`` ->
    ``failed``. A lease whose offer has no provisioning timeout is ready at its start.
    """

    PROVISIONING = "provisioning"
    """Sold; the seller was notified and has until ``provisioning_deadline`` to post access.
    Nothing is charged yet."""
    FAILED = "failed"
    """Never ready (``lease.ended`` with reason ``failed``): nothing charged, all released."""
    SCHEDULED = "scheduled"
    """Sold, starting at ``started_at``: the GPUs are an interrupted lease's until then."""
    RUNNING = "running"
    """The buyer has the GPUs and is being charged."""
    INTERRUPTING = "interrupting"
    """Running, with an interruption notice: it ends at ``interrupt_at``."""
    ENDED = "ended"
    """Over for good (`end_reason` says why); its totals are final."""


class LeaseKey(FrozenModel):
    """What names a lease to its buyer: its id (the trade's) and the buyer who rents it."""

    lease_id: str
    buyer_id: str


class LeaseStopRequested(Payload, LeaseKey):
    """A buyer asked to stop a lease (a command on ``billing.commands``, key: buyer id)."""

    event_type: ClassVar[str] = "lease.stop_requested"
    schema_version: ClassVar[int] = 1

    requested_at: AwareDatetime = Field(
        description="When the buyer asked: the lease ends then (or at its last settled instant,"
        " if billing already charged past it)."
    )


class LeaseTotals(BaseModel):
    """A lease's running totals after an event (cumulative, never deltas)."""

    period: int = Field(ge=0, description="Periods charged so far (0: none yet).")
    charged_through: AwareDatetime = Field(description="The lease is paid up to this instant.")
    total_charged: DecimalAmount = Field(description="In the offer's `currency`.")
    total_paid: DecimalAmount = Field(description="In the buyer's `wallet_currency`.")
    total_fee: DecimalAmount = Field(description="The platform's part, in `currency`.")
    total_seller: DecimalAmount = Field(description="The seller's part, in `currency`.")


class LeaseOpened(Payload):
    """A trade became a lease: the buyer rents the seller's GPUs from ``started_at``."""

    event_type: ClassVar[str] = "lease.opened"
    schema_version: ClassVar[int] = 1

    lease_id: str = Field(description="The trade id.")
    order_id: str
    offer_id: str
    buyer_id: str
    seller_id: str
    gpu: str
    tier: str
    gpus: int = Field(ge=1)
    price_per_gpu_hour: DecimalAmount = Field(description="In the offer's `currency`.")
    currency: Currency
    wallet_currency: Currency = Field(description="The buyer pays from this wallet.")
    billing: BillingGranularity
    hours: int | None = Field(default=None, description="Fixed length; None = until stopped.")
    started_at: AwareDatetime
    ends_at: AwareDatetime | None = None
    provisioning_deadline: AwareDatetime | None = Field(
        default=None,
        description="When the seller must have posted access: the offer's provisioning"
        " timeout after `started_at`, or after billing opened the lease when that is later;"
        " None: the lease is ready at `started_at` and charged from"
        " then. Added to version 1 with a default: older records are ready at their start.",
    )


class LeaseReadyReported(Payload, LeaseKey):
    """The seller posted a provisioning lease's access details (gateway -> billing, on
    ``billing.commands``, key: buyer id): billing charges it from ``ready_at``."""

    event_type: ClassVar[str] = "lease.ready_reported"
    schema_version: ClassVar[int] = 1

    seller_id: str
    reported_at: AwareDatetime = Field(
        description="When the seller posted access: the lease is ready then (or at its"
        " `started_at`, when that is later)."
    )


class LeaseFailureReported(Payload, LeaseKey):
    """The seller cannot deliver a provisioning lease (gateway -> billing, on
    ``billing.commands``, key: buyer id): it fails, nothing is charged."""

    event_type: ClassVar[str] = "lease.failure_reported"
    schema_version: ClassVar[int] = 1

    seller_id: str
    reported_at: AwareDatetime
    detail: str = Field(default="", max_length=500, description="The seller's words.")


class LeaseReady(Payload, LeaseKey):
    """A provisioning lease became ready: it runs and is charged from ``ready_at``
    (per-second leases exactly from then; an hourly lease's first hour starts then)."""

    event_type: ClassVar[str] = "lease.ready"
    schema_version: ClassVar[int] = 1

    seller_id: str
    ready_at: AwareDatetime
    ends_at: AwareDatetime | None = Field(
        default=None,
        description="A fixed-length lease's end, `hours` after `ready_at` (None: until stopped).",
    )


class LeaseCharged(Payload, LeaseKey):
    """One period of a lease was charged (hourly: in advance; per second: after the fact)."""

    event_type: ClassVar[str] = "lease.charged"
    schema_version: ClassVar[int] = 1

    seller_id: str
    transfer_id: str = Field(description="The ledger transfer of this charge.")
    period_start: AwareDatetime
    period_end: AwareDatetime
    amount: DecimalAmount = Field(description="This charge, in the offer's `currency`.")
    currency: Currency
    paid: DecimalAmount = Field(description="What the buyer paid for it, in `wallet_currency`.")
    wallet_currency: Currency
    fee: DecimalAmount = Field(description="The platform's part of `amount`.")
    seller_amount: DecimalAmount = Field(description="The seller's part of `amount`.")
    fx_rate: DecimalAmount | None = Field(
        default=None, description="Offer currency to wallet currency, when they differ."
    )
    fx_rate_at: AwareDatetime | None = None
    totals: LeaseTotals


class LeaseLowBalance(Payload, LeaseKey):
    """The buyer's wallet covers less than the configured runway of this lease (sent once)."""

    event_type: ClassVar[str] = "lease.low_balance"
    schema_version: ClassVar[int] = 1

    wallet_currency: Currency
    funds: DecimalAmount = Field(description="Available balance plus the lease's prepayment.")
    runway_seconds: int = Field(ge=0, description="How long the funds last at this lease's rate.")
    as_of: AwareDatetime


class LeaseEnded(Payload, LeaseKey):
    """A lease ended; ``totals`` are final."""

    event_type: ClassVar[str] = "lease.ended"
    schema_version: ClassVar[int] = 1

    seller_id: str
    reason: LeaseEndReason
    ended_at: AwareDatetime
    currency: Currency
    wallet_currency: Currency
    unpaid: DecimalAmount = Field(
        default=Decimal(0),
        description="Delivered time the wallet could not pay (offer currency; written off).",
    )
    totals: LeaseTotals
    failure: LeaseFailure | None = Field(
        default=None, description="With reason `failed`: why the lease never became ready."
    )
    detail: str = Field(default="", description="With `failed`: the seller's words, if any.")


class LedgerLine(BaseModel):
    """One entry of a transfer on an account's statement."""

    owner: str
    currency: Currency
    kind: str = Field(description="`available`, `held` or `seller_payable`.")
    amount: DecimalAmount = Field(description="Signed: positive adds to the balance.")


class LedgerPosted(Payload):
    """A transfer billing posted, with its entries on accounts' own (non-platform) balances."""

    event_type: ClassVar[str] = "ledger.posted"
    schema_version: ClassVar[int] = 1

    transfer_id: str
    kind: str = Field(description="`topup`, `hold`, `release`, `charge`, `fx`, `correction`, ...")
    created_at: AwareDatetime
    reference: str = ""
    fx_rate: DecimalAmount | None = None
    fx_base: Currency | None = None
    fx_quote: Currency | None = None
    fx_rate_at: AwareDatetime | None = None
    lines: list[LedgerLine]
