"""Billing's lease events as the gateway's tests build them: a lease's opening, then its
charges, warnings, interruption notices and end, each taking the lease's ids and currencies
from its opening; and charges as the settlement loop aggregates them (``leases_settled``).

The defaults are one GPU (``GPU``) on demand at 1 USD an hour, paid from a EUR wallet and
billed by the hour; ``fields`` set any other field or override a default (pydantic validates
the result, so a misspelt field fails the test).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from gpux_contracts.capacity import InterruptionCause, LeaseInterruptionNoticed
from gpux_contracts.ids import new_id
from gpux_contracts.leases import (
    LeaseCharged,
    LeaseEnded,
    LeaseEndReason,
    LeaseFailure,
    LeaseLowBalance,
    LeaseOpened,
    LeaseReady,
    LeaseTotals,
)
from gpux_contracts.money import Currency
from gpux_contracts.offers import BillingGranularity
from gpux_contracts.settlement import LeaseCharges, LeasesSettled
from gpux_devinfra.testing.payloads import GPU, Price


def lease_opened(
    buyer_id: str,
    seller_id: str,
    *,
    started_at: datetime,
    hours: int | None = None,
    **fields: Any,
) -> LeaseOpened:
    """A lease of a new order (its id ``<order>:b1``) and offer, for ``hours`` from
    ``started_at`` (None: until stopped; ``ends_at`` follows unless given)."""
    order_id = new_id()
    values: dict[str, Any] = {
        "lease_id": f"{order_id}:b1",
        "order_id": order_id,
        "offer_id": new_id(),
        "buyer_id": buyer_id,
        "seller_id": seller_id,
        "gpu": GPU,
        "tier": "on_demand",
        "gpus": 1,
        "price_per_gpu_hour": Decimal(1),
        "currency": Currency.USD,
        "wallet_currency": Currency.EUR,
        "billing": BillingGranularity.HOUR,
        "hours": hours,
        "started_at": started_at,
        "ends_at": None if hours is None else started_at + timedelta(hours=hours),
    }
    return LeaseOpened(**(values | fields))


def lease_totals(
    period: int,
    *,
    charged_through: datetime,
    charged: Price,
    fee: Price,
    paid: Price | None = None,
) -> LeaseTotals:
    """A lease's running totals after ``period``: the seller's part is what was charged less
    the fee, and the buyer paid what was charged unless ``paid`` says otherwise."""
    total, cut = Decimal(charged), Decimal(fee)
    return LeaseTotals(
        period=period,
        charged_through=charged_through,
        total_charged=total,
        total_paid=total if paid is None else Decimal(paid),
        total_fee=cut,
        total_seller=total - cut,
    )


def hourly_totals(started_at: datetime, period: int, *, paid: Price | None = None) -> LeaseTotals:
    """The totals after ``period`` hours of 1 an hour from ``started_at``, 0.1 of it the fee."""
    return lease_totals(
        period,
        charged_through=started_at + timedelta(hours=period),
        charged=period,
        fee=Decimal("0.1") * period,
        paid=paid,
    )


def _parties(lease: LeaseOpened) -> dict[str, Any]:
    """The lease's id and its two parties', as its later events name them."""
    return {"lease_id": lease.lease_id, "buyer_id": lease.buyer_id, "seller_id": lease.seller_id}


def _of(lease: LeaseOpened) -> dict[str, Any]:
    """What the lease's charges and its end repeat of its opening."""
    return {
        **_parties(lease),
        "currency": lease.currency,
        "wallet_currency": lease.wallet_currency,
    }


def lease_charged(lease: LeaseOpened, totals: LeaseTotals, **fields: Any) -> LeaseCharged:
    """A charge of 1 (0.1 of it the fee) from the start up to the totals' ``charged_through``,
    under a new transfer id unless given."""
    values: dict[str, Any] = {
        **_of(lease),
        "transfer_id": new_id(),
        "period_start": lease.started_at,
        "period_end": totals.charged_through,
        "amount": Decimal(1),
        "paid": Decimal(1),
        "fee": Decimal("0.1"),
        "seller_amount": Decimal("0.9"),
        "totals": totals,
    }
    return LeaseCharged(**(values | fields))


def lease_ended(lease: LeaseOpened, totals: LeaseTotals, **fields: Any) -> LeaseEnded:
    """The lease stopped where its totals were charged through, nothing left unpaid."""
    values: dict[str, Any] = {
        **_of(lease),
        "reason": LeaseEndReason.STOPPED,
        "ended_at": totals.charged_through,
        "unpaid": Decimal(0),
        "totals": totals,
    }
    return LeaseEnded(**(values | fields))


def lease_failed(
    lease: LeaseOpened,
    failure: LeaseFailure,
    *,
    ended_at: datetime,
    detail: str = "",
    charged_through: datetime | None = None,
) -> LeaseEnded:
    """The lease failed before it ran (``failure``, ``detail``) at ``ended_at``, nothing
    charged: its totals are period 0, charged through its start unless ``charged_through``."""
    through = lease.started_at if charged_through is None else charged_through
    totals = lease_totals(0, charged_through=through, charged=0, fee=0)
    return lease_ended(
        lease,
        totals,
        reason=LeaseEndReason.FAILED,
        failure=failure,
        detail=detail,
        ended_at=ended_at,
    )


def lease_low_balance(lease: LeaseOpened, as_of: datetime, **fields: Any) -> LeaseLowBalance:
    """The warning that the buyer's wallet runs dry for this lease as of ``as_of``."""
    values: dict[str, Any] = {
        "lease_id": lease.lease_id,
        "buyer_id": lease.buyer_id,
        "wallet_currency": lease.wallet_currency,
        "funds": Decimal(0),
        "runway_seconds": 0,
        "as_of": as_of,
    }
    return LeaseLowBalance(**(values | fields))


def lease_noticed(
    lease: LeaseOpened,
    *,
    noticed_at: datetime,
    notice: timedelta,
    cause: InterruptionCause = InterruptionCause.PREEMPTED,
) -> LeaseInterruptionNoticed:
    """Billing's word that the lease is interrupted ``notice`` after ``noticed_at``."""
    return LeaseInterruptionNoticed(
        **_parties(lease),
        offer_id=lease.offer_id,
        cause=cause,
        noticed_at=noticed_at,
        interrupt_at=noticed_at + notice,
        notice_seconds=int(notice.total_seconds()),
    )


def lease_ready(lease: LeaseOpened, ready_at: datetime) -> LeaseReady:
    """Billing's lease.ready at ``ready_at``: a fixed-length lease ends ``hours`` after it."""
    ends = None if lease.hours is None else ready_at + timedelta(hours=lease.hours)
    return LeaseReady(**_parties(lease), ready_at=ready_at, ends_at=ends)


SAME_IN_EVERY_CHARGE = {"lease_id", "buyer_id", "seller_id", "currency", "wallet_currency"}


def lease_charges(*charged: LeaseCharged) -> LeaseCharges:
    """One lease's consecutive charges as a ``leases.settled`` carries them: summed, from the
    first's start to the last's end, under their transfer ids, with the last's totals."""
    first, last = charged[0], charged[-1]
    return LeaseCharges(
        **first.model_dump(include=SAME_IN_EVERY_CHARGE),
        period_start=first.period_start,
        period_end=last.period_end,
        amount=sum((c.amount for c in charged), Decimal(0)),
        paid=sum((c.paid for c in charged), Decimal(0)),
        fee=sum((c.fee for c in charged), Decimal(0)),
        seller_amount=sum((c.seller_amount for c in charged), Decimal(0)),
        fx_rate=last.fx_rate,
        fx_rate_at=last.fx_rate_at,
        transfer_ids=[c.transfer_id for c in charged],
        totals=last.totals,
    )


def leases_settled(*items: LeaseCharges) -> LeasesSettled:
    """One batch of the settlement loop's aggregated charges, settled at the latest end."""
    return LeasesSettled(settled_at=max(i.period_end for i in items), leases=list(items))
