"""Request and response bodies of the offers routes."""

from __future__ import annotations

from datetime import datetime

from pydantic import AwareDatetime, BaseModel, Field

from gpux_contracts.money import Currency, DecimalAmount
from gpux_contracts.offers import BillingGranularity, Tier
from gpux_gateway.entrypoints.schemas import Price, Region, Slug, Strict, amount, from_row
from gpux_gateway.offers.repository import OfferRow


class OfferIn(Strict):
    """A seller's offer of GPU-hours."""

    gpu: Slug = Field(description="Catalog id of the GPU model, e.g. `rtx-4090`.")
    gpus: int = Field(ge=1, le=4096, description="How many GPUs are offered.")
    price_per_gpu_hour: Price = Field(description="Asking price per GPU-hour.")
    currency: Currency
    tier: Tier
    billing: BillingGranularity
    region: Region | None = None
    min_hours: int | None = Field(default=None, ge=1, le=8760)
    available_until: AwareDatetime | None = None


class OfferBatchIn(Strict):
    """Many offers in one request: accepted together or not at all."""

    offers: list[OfferIn] = Field(min_length=1, max_length=500)


class OfferChange(Strict):
    """A new price or GPU count for an offer (at least one)."""

    price_per_gpu_hour: Price | None = None
    gpus: int | None = Field(default=None, ge=1, le=4096)


STATUS_DESCRIPTION = (
    "Where the offer stands: `pending` (submitted, pricing has not decided), `accepted`"
    " (pricing validated it; on its way to the book), `live` (on the book with GPUs"
    " remaining), `rejected` (refused by pricing, `reason` says why), `withdrawn` (taken off"
    " by its seller), `exhausted` (every GPU sold) or `expired` (`available_until` passed)."
    " The last four are final."
)


class OfferOut(BaseModel):
    """An offer as its seller sees it."""

    id: str
    gpu: str
    gpus: int
    remaining_gpus: int
    price_per_gpu_hour: DecimalAmount
    currency: Currency
    tier: Tier
    billing: BillingGranularity
    region: str | None
    min_hours: int | None
    available_until: datetime | None
    status: str = Field(description=STATUS_DESCRIPTION)
    reason: str | None = Field(
        description="Why it was rejected, or why the last change was refused (the offer then"
        " stands as it was)."
    )
    created_at: datetime
    updated_at: datetime


class OfferBatchOut(BaseModel):
    """The offers a bulk request created, in request order."""

    items: list[OfferOut]


def offer_out(row: OfferRow) -> OfferOut:
    """The seller's view of a stored offer."""
    return from_row(OfferOut, row, price_per_gpu_hour=amount(row.price_micros))
