"""What a seller may still do with an offer, and what a change must hold (pure)."""

from __future__ import annotations

from decimal import Decimal

CLOSED = frozenset({"rejected", "withdrawn", "exhausted", "expired"})
"""Offer statuses that never change again: such an offer can be neither changed nor withdrawn."""


def is_closed(status: str) -> bool:
    """Whether an offer in this status is over for good."""
    return status in CLOSED


def change_problem(price_per_gpu_hour: Decimal | None, gpus: int | None) -> str | None:
    """Why a change request changes nothing (it must re-price or resize), or None."""
    if price_per_gpu_hour is None and gpus is None:
        return "change price or gpus"
    return None
