"""What a lease has cost so far, as its buyer and seller see it (pure)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import NamedTuple

from gpux_contracts.leases import LeaseTotals
from gpux_contracts.money import accrued_micros, to_micros
from gpux_contracts.offers import BillingGranularity


def cost_so_far_micros(
    *,
    billing: BillingGranularity,
    running: bool,
    price_micros_per_gpu_hour: int,
    gpus: int,
    started_at: datetime,
    ends_at: datetime | None,
    total_charged_micros: int,
    now: datetime,
) -> int:
    """The lease's cost up to ``now`` in the offer's currency, in micro-units.

    A running per-second lease accrues by the whole second (billing settles it in batches,
    so its charges trail the clock): ``round(price × gpus × s / 3600)``, up to ``ends_at``
    when it has one. It never shows less than billing already charged, so a gateway clock
    that lags billing's cannot make the cost go down. An hourly lease is charged in advance
    and an ended one is final: both cost what was charged.
    """
    if not running or billing is not BillingGranularity.SECOND:
        return total_charged_micros
    until = now if ends_at is None else min(now, ends_at)
    elapsed_s = max(0, (until - started_at) // timedelta(seconds=1))
    accrued = accrued_micros(price_micros_per_gpu_hour * gpus, elapsed_s)
    return max(accrued, total_charged_micros)


def totals_apply(held_period: int | None, period: int) -> bool:
    """Whether an event's running totals replace the lease's (never with an earlier period's).

    Lease events may be read in any order on a replay; the totals of the highest period read
    stay, so a late ``lease.charged`` cannot roll a lease's figures back.
    """
    return held_period is None or held_period <= period


class TotalsMicros(NamedTuple):
    """A lease's running totals as both stores keep them: money in micro-units, field by
    field as the lease row names them."""

    period: int
    charged_through: datetime
    total_charged_micros: int
    total_paid_micros: int
    total_fee_micros: int
    total_seller_micros: int


def totals_micros(totals: LeaseTotals) -> TotalsMicros:
    """The running totals an event carries, as the lease row keeps them."""
    return TotalsMicros(
        totals.period,
        totals.charged_through,
        to_micros(totals.total_charged),
        to_micros(totals.total_paid),
        to_micros(totals.total_fee),
        to_micros(totals.total_seller),
    )
