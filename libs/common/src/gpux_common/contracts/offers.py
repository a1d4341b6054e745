"""Sellers' offer commands, produced by the gateway, consumed by pricing."""

from __future__ import annotations

from enum import StrEnum
from typing import ClassVar

from pydantic import AwareDatetime, Field

from gpux_common.events import Payload
from gpux_common.money import Currency, DecimalAmount


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
