"""What the offers resource stores: the sellers' view of their offers."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from gpux_contracts.offers import (
    DEFAULT_NOTICE_SECONDS,
    OfferAccepted,
    OfferStatusChanged,
    OfferSubmitted,
)
from gpux_gateway.domain.offers import FIRST_REVISION


@dataclass(frozen=True, slots=True)
class OfferRow:
    """An offer as its seller's view stores it (money in micro-units)."""

    id: str
    seller_id: str
    gpu: str
    gpus: int
    remaining_gpus: int
    price_micros: int
    currency: str
    tier: str
    billing: str
    region: str | None
    min_hours: int | None
    available_until: datetime | None
    status: str
    reason: str | None
    created_at: datetime
    updated_at: datetime
    revision: int = FIRST_REVISION
    """The revision pricing accepted that the price and GPUs are of."""
    interruptible_price_micros: int | None = None
    """With tier on_demand: the price of the same GPUs sold as interruptible leases."""
    interruption_notice_seconds: int = DEFAULT_NOTICE_SECONDS
    """How long before an interruption its lease is told."""
    provisioning_timeout_seconds: int = 0
    """How long after a lease starts its seller has to post access (0: ready at the start)."""
    capacity_gpus: int | None = None
    """The offer's GPUs as the book last reported them (None until it does)."""
    leased_gpus: int | None = None
    """GPUs held by leases as the book last reported them (None until it does)."""


class OffersRepository(Protocol):
    """The offers table.

    ``apply_status`` and ``apply_accepted`` are written when the unit of work commits, in the
    order given (a batch of reports in one round trip); nothing in the same unit reads what
    they wrote.
    """

    async def add(self, offer: OfferSubmitted, now: datetime) -> OfferRow:
        """Store the seller's view of a submitted offer (status pending)."""
        ...

    async def get(self, seller_id: str, offer_id: str) -> OfferRow | None:
        """One of the seller's offers (another seller's is None, like a missing one)."""
        ...

    async def page(self, seller_id: str, after: str | None, limit: int) -> list[OfferRow]:
        """Up to ``limit`` of the seller's offers in id order, after the cursor id."""
        ...

    async def apply_status(self, change: OfferStatusChanged, now: datetime) -> None:
        """Take a status report of pricing or the book as ``domain.offers.after_report`` says
        (a closed offer stays closed, one on the book stays as the book reported it through a
        change), and the capacity and leased GPUs the report carries (a report without them
        keeps those shown)."""
        ...

    async def apply_accepted(self, accepted: OfferAccepted, now: datetime) -> None:
        """Show the prices, notice and GPUs of a change pricing accepted, unless a later
        revision is shown or the offer closed (``domain.offers.change_applies``)."""
        ...
