"""How a buyer's view of an order follows the reports of billing and the book (pure)."""

from __future__ import annotations

FINAL = ("filled", "cancelled", "expired", "rejected")
"""Order statuses that never change again."""

UNKNOWN_GPU = "unknown_gpu"
"""The reason an order for a GPU the catalog does not have is rejected (pricing's word for an
offer of one)."""


def is_final(status: str) -> bool:
    """Whether an order in this status is over for good (it cannot be cancelled)."""
    return status in FINAL


def report_applies(*, held_status: str, held_filled_gpus: int, filled_gpus: int) -> bool:
    """Whether a status report replaces the order's view.

    An order that ended stays as it ended, and fills never go down: a late or redelivered
    report cannot undo a newer one, whatever order the reports are read in.
    """
    return not is_final(held_status) and held_filled_gpus <= filled_gpus
