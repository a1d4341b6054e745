"""Sellers' offer commands, produced by the gateway, consumed by pricing."""

from __future__ import annotations

from enum import StrEnum
from typing import ClassVar

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field

from gpux_contracts.events import Payload
from gpux_contracts.money import Currency, DecimalAmount


class Tier(StrEnum):
    """How an offered GPU may be taken back."""

    ON_DEMAND = "on_demand"
    """Runs until the lease ends."""
    INTERRUPTIBLE = "interruptible"
    """Cheaper; the seller may reclaim it."""


class BillingGranularity(StrEnum):
    """How a lease on the offer is charged."""

    HOUR = "hour"
    """Each started hour, in advance."""
    SECOND = "second"
    """Per second, settled in batches and exactly at stop."""


class OfferKey(BaseModel):
    """What addresses an offer on the book: its id, its seller, its GPU (the book's key)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    offer_id: str
    seller_id: str
    gpu: str


class OfferSubmitted(Payload):
    """A seller asked to put GPUs on the market (a command; pricing validates it)."""

    event_type: ClassVar[str] = "offer.submitted"
    schema_version: ClassVar[int] = 1

    offer_id: str
    seller_id: str
    gpu: str = Field(description="Catalog id of the GPU model, e.g. `rtx-4090`.")
    gpus: int = Field(ge=1, description="How many GPUs are offered.")
    price_per_gpu_hour: DecimalAmount = Field(description="Asking price per GPU-hour.")
    currency: Currency
    tier: Tier
    billing: BillingGranularity
    region: str | None = None
    min_hours: int | None = Field(default=None, ge=1)
    available_until: AwareDatetime | None = None


class OfferChangeRequested(Payload, OfferKey):
    """A seller asked to re-price an offer or change its GPU count (a command)."""

    event_type: ClassVar[str] = "offer.change_requested"
    schema_version: ClassVar[int] = 1

    price_per_gpu_hour: DecimalAmount | None = None
    gpus: int | None = Field(default=None, ge=1)


class OfferWithdrawalRequested(Payload, OfferKey):
    """A seller asked to take an offer off the market (a command)."""

    event_type: ClassVar[str] = "offer.withdrawal_requested"
    schema_version: ClassVar[int] = 1


class OfferStatus(StrEnum):
    """Where an offer stands."""

    PENDING = "pending"
    """Submitted; pricing has not decided yet."""
    ACCEPTED = "accepted"
    """Valid; on its way to the book."""
    LIVE = "live"
    """On the book with GPUs remaining."""
    REJECTED = "rejected"
    """Refused by pricing; ``reason`` says why."""
    WITHDRAWN = "withdrawn"
    """Taken off by its seller."""
    EXHAUSTED = "exhausted"
    """Every GPU was sold."""
    EXPIRED = "expired"
    """``available_until`` passed."""


class OfferAccepted(Payload):
    """Pricing validated an offer (or a change to it); the book should hold it like this."""

    event_type: ClassVar[str] = "offer.accepted"
    schema_version: ClassVar[int] = 1

    offer: OfferSubmitted = Field(description="The offer as it now stands (after any change).")
    revision: int = Field(ge=1, description="1 for a new offer, +1 for each accepted change.")


class OfferWithdrawn(Payload, OfferKey):
    """Pricing forwards a seller's withdrawal to the book."""

    event_type: ClassVar[str] = "offer.withdrawn"
    schema_version: ClassVar[int] = 1


class OfferStatusChanged(Payload, OfferKey):
    """An offer's status or remaining GPUs changed (from pricing or from the book)."""

    event_type: ClassVar[str] = "offer.status_changed"
    schema_version: ClassVar[int] = 1
    status: OfferStatus
    remaining_gpus: int = Field(ge=0)
    reason: str | None = Field(default=None, description="Why it was rejected, when it was.")
