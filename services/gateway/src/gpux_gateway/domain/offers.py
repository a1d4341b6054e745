"""What a seller may still do with an offer, what a submission or a change must hold, and how
the seller's view follows the reports of pricing and the book (pure)."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from gpux_contracts.offers import MAX_PROVISIONING_TIMEOUT_SECONDS, MIN_PROVISIONING_TIMEOUT_SECONDS

CLOSED = frozenset({"rejected", "withdrawn", "expired"})
"""Offer statuses that never change again: such an offer can be neither changed nor withdrawn."""

ON_BOOK = frozenset({"live", "exhausted"})
"""Statuses of an offer the book holds: ``exhausted`` (no free GPU now) is live again when a
lease gives GPUs back, and either may be changed or withdrawn."""

FIRST_REVISION = 1
"""The revision of an offer as its seller submitted it (what the view starts from)."""

ON_DEMAND = "on_demand"
"""The tier whose offers may have a second, interruptible price."""


def is_closed(status: str) -> bool:
    """Whether an offer in this status is over for good."""
    return status in CLOSED


def change_problem(
    price_per_gpu_hour: Decimal | None,
    gpus: int | None,
    interruptible_price_per_gpu_hour: Decimal | None = None,
) -> str | None:
    """Why a change request changes nothing (it must re-price or resize), or None."""
    if price_per_gpu_hour is None and gpus is None and interruptible_price_per_gpu_hour is None:
        return "change price, interruptible price or gpus"
    return None


def interruptible_price_problem(
    tier: str, price_per_gpu_hour: Decimal | None, interruptible_price_per_gpu_hour: Decimal | None
) -> str | None:
    """Why an interruptible price cannot go with this offer, or None.

    Only an on-demand offer sells its pool a second time as interruptible leases, and never
    dearer than on demand (``price_per_gpu_hour``, when it is known here: a change without a
    new on-demand price is checked by pricing against the price it holds).
    """
    if interruptible_price_per_gpu_hour is None:
        return None
    if tier != ON_DEMAND:
        return "only an offer of tier on_demand has an interruptible price"
    if price_per_gpu_hour is not None and interruptible_price_per_gpu_hour > price_per_gpu_hour:
        return "must be at most price_per_gpu_hour"
    return None


def provisioning_timeout_problem(seconds: int) -> str | None:
    """Why an offer cannot state this provisioning timeout, or None: 0 (the machines are
    ready at the lease's start) or a timeout within the contract's bounds."""
    if (
        seconds == 0
        or MIN_PROVISIONING_TIMEOUT_SECONDS <= seconds <= MAX_PROVISIONING_TIMEOUT_SECONDS
    ):
        return None
    return (
        f"must be 0 (ready at the start) or {MIN_PROVISIONING_TIMEOUT_SECONDS}"
        f" to {MAX_PROVISIONING_TIMEOUT_SECONDS} seconds"
    )


@dataclass(frozen=True, slots=True)
class Standing:
    """What a status report says of an offer, and what the seller's view shows of it."""

    status: str
    remaining_gpus: int
    reason: str | None


def after_report(held: Standing, report: Standing) -> Standing | None:
    """What the seller's view shows once a status report is read (None: the report is not
    taken).

    Reports come from pricing (accepted, rejected) and from the book (live, exhausted,
    withdrawn, expired), so they can be read in another order than they were made. A closed
    offer stays as it closed; nothing goes back to pending; pricing's ``accepted`` of a
    change (or of a refused change, with its reason) leaves an offer on the book as the book
    last reported it, until the book reports it again; and the book moves an offer between
    ``live`` and ``exhausted`` as its GPUs are leased and come back.
    """
    if is_closed(held.status) or report.status == "pending":
        return None
    if held.status in ON_BOOK and report.status == "accepted":
        return Standing(held.status, held.remaining_gpus, report.reason)
    return report


@dataclass(frozen=True, slots=True)
class Pool:
    """An offer's GPUs as its seller sees them: the capacity, those leased now, those free."""

    capacity_gpus: int
    leased_gpus: int
    remaining_gpus: int


def pool_shown(
    *, gpus: int, remaining_gpus: int, capacity_gpus: int | None, leased_gpus: int | None
) -> Pool:
    """The offer's pool from what the book last reported of it; until the book reports its
    capacity and leased GPUs (pricing's reports and older books do not), the offer's ``gpus``
    are its capacity and what is not free is leased."""
    capacity = gpus if capacity_gpus is None else capacity_gpus
    leased = max(0, capacity - remaining_gpus) if leased_gpus is None else leased_gpus
    return Pool(capacity, leased, remaining_gpus)


def change_applies(*, held_status: str, held_revision: int, revision: int) -> bool:
    """Whether a change pricing accepted (its revision) replaces the offer's price and GPUs:
    only a later revision, and never on a closed offer."""
    return not is_closed(held_status) and revision > held_revision
