"""Sellers' offer commands, produced by the gateway, consumed by pricing."""

from __future__ import annotations

from enum import StrEnum
from typing import ClassVar

from pydantic import AwareDatetime, Field

from gpux_contracts.base import FrozenModel
from gpux_contracts.events import Payload
from gpux_contracts.money import Currency, DecimalAmount


class Tier(StrEnum):
    """How a leased GPU may be taken back."""

    ON_DEMAND = "on_demand"
    """Runs until the lease ends; never interrupted."""
    INTERRUPTIBLE = "interruptible"
    """Cheaper; interrupted with notice when an on-demand buyer needs the GPUs or the seller
    reclaims them (``lease.interruption_notice``)."""


DEFAULT_NOTICE_SECONDS = 120
"""An interruptible lease is told at least this long before it is interrupted."""
MAX_NOTICE_SECONDS = 86_400
"""The longest notice an offer may state."""
DEFAULT_PROVISIONING_TIMEOUT_SECONDS = 600
"""How long a seller has to post a lease's access when the offer states nothing (the API's
default; the event field's own default, 0, keeps older records ready at their start)."""
MIN_PROVISIONING_TIMEOUT_SECONDS = 60
"""The shortest provisioning timeout an offer may state (other than 0: ready at the start)."""
MAX_PROVISIONING_TIMEOUT_SECONDS = 86_400
"""The longest provisioning timeout an offer may state."""


class BillingGranularity(StrEnum):
    """How a lease on the offer is charged."""

    HOUR = "hour"
    """Each started hour, in advance."""
    SECOND = "second"
    """Per second, settled in batches and exactly at stop."""


class OfferKey(FrozenModel):
    """What addresses an offer on the book: its id, its seller, its GPU (the book's key)."""

    offer_id: str
    seller_id: str
    gpu: str


class OfferSubmitted(Payload):
    """A seller asked to put GPUs on the market (a command; pricing validates it).

    An offer is capacity over time: ``gpus`` GPUs until ``available_until`` (or withdrawal),
    one pool sold in either tier. With ``tier`` ``on_demand``, ``price_per_gpu_hour`` is the
    on-demand price and ``interruptible_price_per_gpu_hour``, when given, sells the same
    GPUs as interruptible leases too. With ``tier`` ``interruptible`` (the form before
    capacity), the pool is sold only as interruptible, at ``price_per_gpu_hour``. Leases
    occupy GPUs from their start to their end and give them back when they end.

    The capacity fields were added to version 1 with defaults, so older records read as
    single-tier offers with the default notice.
    """

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
    interruptible_price_per_gpu_hour: DecimalAmount | None = Field(
        default=None,
        description="With `tier` on_demand: also sell the same GPUs as interruptible leases at"
        " this price (at most the on-demand price).",
    )
    interruption_notice_seconds: int = Field(
        default=DEFAULT_NOTICE_SECONDS,
        ge=DEFAULT_NOTICE_SECONDS,
        le=MAX_NOTICE_SECONDS,
        description="How long before an interruption its lease is told.",
    )
    provisioning_timeout_seconds: int = Field(
        default=0,
        ge=0,
        le=MAX_PROVISIONING_TIMEOUT_SECONDS,
        description="How long after a lease starts the seller has to post its access details"
        " before it fails (the API's default is 600). 0: the machines are ready at the start,"
        " charged from then (also what records from before the delivery issue mean).",
    )


class OfferChangeRequested(Payload, OfferKey):
    """A seller asked to re-price an offer or change its GPU count (a command)."""

    event_type: ClassVar[str] = "offer.change_requested"
    schema_version: ClassVar[int] = 1

    price_per_gpu_hour: DecimalAmount | None = None
    gpus: int | None = Field(default=None, ge=1, description="The new capacity.")
    interruptible_price_per_gpu_hour: DecimalAmount | None = Field(
        default=None, description="A new interruptible price (an on-demand offer only)."
    )


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
    """On the book with free GPUs."""
    REJECTED = "rejected"
    """Refused by pricing; ``reason`` says why."""
    WITHDRAWN = "withdrawn"
    """Taken off by its seller."""
    EXHAUSTED = "exhausted"
    """Every GPU is leased now; the offer is live again when a lease gives GPUs back."""
    EXPIRED = "expired"
    """``available_until`` passed."""


class OfferAccepted(Payload):
    """Pricing validated an offer (or a change to it); the book should hold it like this."""

    event_type: ClassVar[str] = "offer.accepted"
    schema_version: ClassVar[int] = 1

    offer: OfferSubmitted = Field(description="The offer as it now stands (after any change).")
    revision: int = Field(ge=1, description="1 for a new offer, +1 for each accepted change.")
    changed: list[str] | None = Field(
        default=None,
        description="The fields this revision's change set (`price_per_gpu_hour`, `gpus`,"
        " `interruptible_price_per_gpu_hour`); None: the whole offer (a new one). The book"
        " applies only these, so a re-price never undoes a capacity the book changed itself"
        " (a reclaimed lease's GPUs).",
    )


class OfferWithdrawn(Payload, OfferKey):
    """Pricing forwards a seller's withdrawal to the book."""

    event_type: ClassVar[str] = "offer.withdrawn"
    schema_version: ClassVar[int] = 1


class OfferStatusChanged(Payload, OfferKey):
    """An offer's status or remaining GPUs changed (from pricing or from the book)."""

    event_type: ClassVar[str] = "offer.status_changed"
    schema_version: ClassVar[int] = 1
    status: OfferStatus
    remaining_gpus: int = Field(ge=0, description="Free now: capacity minus leased GPUs.")
    reason: str | None = Field(default=None, description="Why it was rejected, when it was.")
    capacity_gpus: int | None = Field(
        default=None, ge=0, description="The offer's GPUs (from the book; None from pricing)."
    )
    leased_gpus: int | None = Field(
        default=None, ge=0, description="GPUs held by leases now (from the book)."
    )
