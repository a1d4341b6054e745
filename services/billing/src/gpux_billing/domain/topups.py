"""Top-ups: which providers book, and when a requested top-up is booked (pure).

A top-up is requested by the gateway and booked once: at once for the ``dev`` provider (when
the operator enabled it, for local demos), or when the admin confirms a ``manual`` one. A
confirmation may arrive before its request; it is kept until the request comes.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpux_contracts.money import Currency

DEV = "dev"
MANUAL = "manual"
PROVIDERS = frozenset({DEV, MANUAL})
REQUESTED = "requested"
BOOKED = "booked"
REJECTED = "rejected"
PROVIDER_DISABLED = "provider_disabled"


@dataclass(frozen=True, slots=True)
class Topup:
    """A top-up as billing knows it; ``account_id`` is None while only a confirmation came."""

    id: str
    account_id: str | None
    currency: Currency | None
    amount_micros: int | None
    provider: str | None
    status: str
    confirmed: bool


def provider_refused(provider: str, dev_topups: bool) -> bool:
    """Whether billing refuses top-ups of this provider (unknown, or ``dev`` when disabled)."""
    return provider not in PROVIDERS or (provider == DEV and not dev_topups)


def books_now(provider: str, confirmed: bool) -> bool:
    """Whether a requested top-up books now: ``dev`` at once, ``manual`` once confirmed."""
    return provider == DEV or confirmed
