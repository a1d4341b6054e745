"""Response bodies and parameters of the leases, statements and earnings routes."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Annotated, Literal

from fastapi import Path, Query
from pydantic import BaseModel, Field

from gpux_contracts.capacity import InterruptionCause
from gpux_contracts.leases import LeaseEndReason, LeaseFailure, LeaseStatus
from gpux_contracts.money import Currency, DecimalAmount
from gpux_contracts.offers import BillingGranularity
from gpux_gateway.domain.leases import (
    cost_so_far_micros,
    runs_until,
    seconds_left,
    status_of,
)
from gpux_gateway.entrypoints.schemas import amount, examples, from_row, listing
from gpux_gateway.leases.repository import Earnings, LeaseRow, LedgerLineRow

LEASE_ID = "01JWQY0PRGDP55WV50HQP4J00Y:b1"
"""A lease's id as the examples show it: its order's id and the fill (`b1`)."""

LeaseId = Annotated[
    str,
    Path(
        pattern=r"^[0-9A-Za-z_:-]{1,100}$",
        description="A lease id: the id of the trade that opened it (e.g. `<order id>:b1`).",
    ),
]
"""A lease id in a path (trade ids hold a colon, so ResourceId does not fit)."""

LeaseCursor = Annotated[
    str | None,
    Query(pattern=r"^[0-9A-Za-z_:-]{1,100}$", description="`next_cursor` of the previous page."),
]
"""The cursor of the leases list: the last lease id of the previous page."""

LineCursor = Annotated[
    str | None,
    Query(pattern=r"^[0-9]{1,18}$", description="`next_cursor` of the previous page."),
]
"""The cursor of a statement: the position of the last line of the previous page."""


class LeaseRole(StrEnum):
    """Which side of a lease the calling account is on."""

    BUYER = "buyer"
    """Leases the account rents."""
    SELLER = "seller"
    """Leases of the account's offers."""


class LeaseOut(BaseModel):
    """A lease as its buyer and its seller see it (both parties see both ids: they traded)."""

    model_config = examples(
        {
            "lease_id": LEASE_ID,
            "order_id": "01JWQY0PRGDP55WV50HQP4J00Y",
            "offer_id": "01JWQY1TWRSQ9BRBPPDJ4A5T1C",
            "gpu": "h100-sxm",
            "tier": "on_demand",
            "gpus": 2,
            "buyer_id": "01JWQXXABRF8P0H4WB1N5VPJMS",
            "seller_id": "01JWQXYEG0CE57HP3MNH2B78BZ",
            "price_per_gpu_hour": "2.49",
            "currency": "USD",
            "wallet_currency": "USD",
            "billing": "second",
            "hours": 24,
            "started_at": "2025-06-02T09:30:13Z",
            "ends_at": "2025-06-03T09:30:13Z",
            "status": "running",
            "end_reason": None,
            "ended_at": None,
            "provisioning_deadline": "2025-06-02T09:40:13Z",
            "ready_at": "2025-06-02T09:33:40Z",
            "failure": None,
            "failure_detail": "",
            "interrupt_at": None,
            "interruption_cause": None,
            "interruption_noticed_at": None,
            "charged_through": "2025-06-02T10:33:40Z",
            "total_charged": "4.98",
            "total_paid": "4.98",
            "total_fee": "0.498",
            "total_seller": "4.482",
            "unpaid": "0.00",
            "low_balance_at": None,
            "cost_so_far": "5.012541",
        }
    )

    lease_id: str = Field(description="The id of the trade that opened the lease.")
    order_id: str
    offer_id: str
    gpu: str
    tier: str
    gpus: int
    buyer_id: str
    seller_id: str
    price_per_gpu_hour: DecimalAmount = Field(description="In `currency`, the offer's.")
    currency: Currency
    wallet_currency: Currency = Field(description="The buyer pays from this wallet.")
    billing: BillingGranularity
    hours: int | None = Field(description="Fixed length; null = until stopped.")
    started_at: datetime = Field(
        description="When the buyer gets the GPUs (and charging starts): later than the trade"
        " for an on-demand lease that preempted an interruptible one (`scheduled` until then)."
    )
    ends_at: datetime | None
    status: LeaseStatus = Field(
        description="`scheduled` (sold, starts at `started_at`), `provisioning` (the seller sets"
        " the machines up until `provisioning_deadline`; nothing is charged), `running`,"
        " `interrupting` (it ends at `interrupt_at`), `ended` (`end_reason` says why) or"
        " `failed` (never ready: `failure` says why; nothing charged)."
    )
    end_reason: LeaseEndReason | None
    ended_at: datetime | None
    provisioning_deadline: datetime | None = Field(
        description="When the seller must have posted access (null: the lease was ready at"
        " `started_at`)."
    )
    ready_at: datetime | None = Field(
        description="When a provisioning lease became ready: it is charged from then."
    )
    failure: LeaseFailure | None = Field(
        description="With `failed`: `seller_reported` or `provisioning_timeout`."
    )
    failure_detail: str = Field(description="With `seller_reported`: the seller's words.")
    interrupt_at: datetime | None = Field(
        description="With an interruption notice: when the lease ends (billed exactly to it)."
    )
    interruption_cause: InterruptionCause | None = Field(
        description="Why it is interrupted: `preempted` by an on-demand order, or `reclaimed`"
        " by its seller."
    )
    interruption_noticed_at: datetime | None = Field(
        description="When the interruption was decided (`interrupt_at` is the offer's notice"
        " later, at least)."
    )
    charged_through: datetime | None = Field(
        description="Paid up to this instant; null until the first `lease.charged` or the"
        " `lease.ended` was read (a lease that ended before any charge shows `started_at`)."
    )
    total_charged: DecimalAmount = Field(description="Charged so far, in `currency`.")
    total_paid: DecimalAmount = Field(description="Paid so far, in `wallet_currency`.")
    total_fee: DecimalAmount = Field(description="The platform's part, in `currency`.")
    total_seller: DecimalAmount = Field(description="The seller's part, in `currency`.")
    unpaid: DecimalAmount = Field(
        description="Delivered time the wallet could not pay (in `currency`; written off)."
    )
    low_balance_at: datetime | None = Field(
        description="When the buyer's funds first ran low for this lease."
    )
    cost_so_far: DecimalAmount = Field(
        description="In `currency`: a running per-second lease's cost up to now (whole seconds,"
        " never below `total_charged`); otherwise `total_charged`."
    )


class InterruptionOut(BaseModel):
    """A lease's pending interruption, as code on the rented machine polls for it (as EC2's
    spot `instance-action` metadata): checkpoint within `seconds_left`."""

    model_config = examples(
        {
            "lease_id": "01JWQZ3M5Q8RWB2C7D4E6F9G0H:b1",
            "action": "terminate",
            "cause": "preempted",
            "noticed_at": "2025-06-02T11:02:00Z",
            "interrupt_at": "2025-06-02T11:04:00Z",
            "seconds_left": 87,
        }
    )

    lease_id: str
    action: Literal["terminate"] = Field(
        default="terminate", description="What happens at `interrupt_at`: the lease ends."
    )
    cause: InterruptionCause = Field(
        description="`preempted` (an on-demand order takes the GPUs) or `reclaimed` (the seller"
        " takes them back)."
    )
    noticed_at: datetime = Field(description="When the interruption was decided.")
    interrupt_at: datetime = Field(description="When the lease ends.")
    seconds_left: int = Field(
        ge=0, description="Whole seconds until `interrupt_at` (0 once it passed)."
    )


class LeasePage(BaseModel):
    """One page of leases; pass `next_cursor` as `cursor` for the next."""

    model_config = listing(LeaseOut, next_cursor=None)

    items: list[LeaseOut]
    next_cursor: str | None


class StopAccepted(BaseModel):
    """A stop that billing will apply: the lease ends at `requested_at` (or where it is paid)."""

    model_config = examples(
        {"lease_id": LEASE_ID, "status": "stop_requested", "requested_at": "2025-06-02T12:15:00Z"}
    )

    lease_id: str
    status: str = Field(default="stop_requested", description="Always `stop_requested`.")
    requested_at: datetime


class LedgerLineOut(BaseModel):
    """One line of the account's statement: one entry of a transfer billing posted."""

    model_config = examples(
        {
            "transfer_id": f"charge:{LEASE_ID}:1",
            "kind": "charge",
            "created_at": "2025-06-02T09:33:41Z",
            "reference": LEASE_ID,
            "account_kind": "held",
            "currency": "USD",
            "amount": "-4.98",
            "fx_rate": None,
            "fx_base": None,
            "fx_quote": None,
            "fx_rate_at": None,
        },
        {
            "transfer_id": "topup:01JWQY8KP89STSWERR7MFT5XVN",
            "kind": "topup",
            "created_at": "2025-06-02T09:12:30Z",
            "reference": "01JWQY8KP89STSWERR7MFT5XVN",
            "account_kind": "available",
            "currency": "USD",
            "amount": "250.00",
            "fx_rate": None,
            "fx_base": None,
            "fx_quote": None,
            "fx_rate_at": None,
        },
    )

    transfer_id: str
    kind: str = Field(description="The transfer's kind: `topup`, `hold`, `charge`, `fx`, ...")
    created_at: datetime
    reference: str
    account_kind: str = Field(description="The balance it moved: `available`, `held`, ...")
    currency: Currency
    amount: DecimalAmount = Field(description="Signed: positive adds to the balance.")
    fx_rate: DecimalAmount | None = Field(
        description="With a conversion: the rate applied, from `fx_base` to `fx_quote`."
    )
    fx_base: Currency | None
    fx_quote: Currency | None
    fx_rate_at: datetime | None


class LedgerPage(BaseModel):
    """One page of statement lines, newest first."""

    model_config = listing(LedgerLineOut, next_cursor="48213")

    items: list[LedgerLineOut]
    next_cursor: str | None


class EarningsOut(BaseModel):
    """A seller's takings in one offer currency, from every lease of its offers."""

    model_config = examples(
        {
            "currency": "USD",
            "gross": "1240.50",
            "fee": "124.05",
            "net": "1116.45",
            "leases": 52,
            "running": 3,
        }
    )

    currency: Currency
    gross: DecimalAmount = Field(description="Charged to buyers.")
    fee: DecimalAmount = Field(description="The platform's part.")
    net: DecimalAmount = Field(description="The seller's part.")
    leases: int = Field(description="Leases counted.")
    running: int = Field(description="Of which still running (their figures still grow).")


class EarningsList(BaseModel):
    """A seller's takings, one item per currency it has sold in."""

    model_config = listing(EarningsOut)

    items: list[EarningsOut]


def lease_out(row: LeaseRow, now: datetime) -> LeaseOut:
    """A stored lease as its parties see it at ``now``: its status then, its cost up to then
    (a running per-second lease accrues from its ``ready_at`` when it provisioned first).

    Only opened leases are shown, so the fields only ``lease.opened`` carries are set.
    """
    assert row.billing is not None
    assert row.price_micros is not None
    assert row.gpus is not None
    assert row.started_at is not None
    billing = BillingGranularity(row.billing)
    cost = cost_so_far_micros(
        billing=billing,
        running=row.status == LeaseStatus.RUNNING,
        price_micros_per_gpu_hour=row.price_micros,
        gpus=row.gpus,
        started_at=row.ready_at or row.started_at,
        ends_at=runs_until(row.ends_at, row.interrupt_at),
        total_charged_micros=row.total_charged_micros,
        now=now,
    )
    status = status_of(
        stored=row.status, interrupt_at=row.interrupt_at, started_at=row.started_at, now=now
    )
    return from_row(
        LeaseOut,
        row,
        lease_id=row.id,
        status=status,
        price_per_gpu_hour=amount(row.price_micros),
        total_charged=amount(row.total_charged_micros),
        total_paid=amount(row.total_paid_micros),
        total_fee=amount(row.total_fee_micros),
        total_seller=amount(row.total_seller_micros),
        unpaid=amount(row.unpaid_micros),
        cost_so_far=amount(cost),
    )


def interruption_out(row: LeaseRow, now: datetime) -> InterruptionOut | None:
    """The lease's interruption as its machine polls for it at ``now`` (None: no notice read)."""
    cause = row.interruption_cause
    if row.interrupt_at is None or row.interruption_noticed_at is None or cause is None:
        return None
    return InterruptionOut(
        lease_id=row.id,
        cause=InterruptionCause(cause),
        noticed_at=row.interruption_noticed_at,
        interrupt_at=row.interrupt_at,
        seconds_left=seconds_left(row.interrupt_at, now),
    )


def line_out(row: LedgerLineRow) -> LedgerLineOut:
    """One stored statement line."""
    rate = row.fx_rate
    return from_row(
        LedgerLineOut,
        row,
        kind=row.transfer_kind,
        amount=amount(row.amount_micros),
        fx_rate=None if rate is None else rate.normalize(),
    )


def earnings_out(earnings: Earnings) -> EarningsOut:
    """A seller's takings in one currency, as answered."""
    return from_row(
        EarningsOut,
        earnings,
        gross=amount(earnings.gross_micros),
        fee=amount(earnings.fee_micros),
        net=amount(earnings.net_micros),
    )
