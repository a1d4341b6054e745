"""What a seller may still do with an offer, what a change must hold, and how the seller's
view follows the reports of pricing and the book (pure)."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

CLOSED = frozenset({"rejected", "withdrawn", "exhausted", "expired"})
"""Offer statuses that never change again: such an offer can be neither changed nor withdrawn."""

FIRST_REVISION = 1
"""The revision of an offer as its seller submitted it (what the view starts from)."""


def is_closed(status: str) -> bool:
    """Whether an offer in this status is over for good."""
    return status in CLOSED


def change_problem(price_per_gpu_hour: Decimal | None, gpus: int | None) -> str | None:
    """Why a change request changes nothing (it must re-price or resize), or None."""
    if price_per_gpu_hour is None and gpus is None:
        return "change price or gpus"
    return None


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
    offer stays as it closed; nothing goes back to pending; and pricing's ``accepted`` of a
    change (or of a refused change, with its reason) leaves a live offer live with the GPUs
    the book last reported, until the book reports it again.
    """
    if is_closed(held.status) or report.status == "pending":
        return None
    if held.status == "live" and report.status == "accepted":
        return Standing(held.status, held.remaining_gpus, report.reason)
    return report


def change_applies(*, held_status: str, held_revision: int, revision: int) -> bool:
    """Whether a change pricing accepted (its revision) replaces the offer's price and GPUs:
    only a later revision, and never on a closed offer."""
    return not is_closed(held_status) and revision > held_revision
