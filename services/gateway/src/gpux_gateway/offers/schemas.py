"""Request and response bodies of the offers routes."""

from __future__ import annotations

from datetime import datetime

from pydantic import AwareDatetime, BaseModel, Field

from gpux_contracts.money import Currency, DecimalAmount
from gpux_contracts.offers import (
    DEFAULT_NOTICE_SECONDS,
    DEFAULT_PROVISIONING_TIMEOUT_SECONDS,
    MAX_NOTICE_SECONDS,
    MAX_PROVISIONING_TIMEOUT_SECONDS,
    MIN_PROVISIONING_TIMEOUT_SECONDS,
    BillingGranularity,
    Tier,
)
from gpux_gateway.domain.offers import pool_shown
from gpux_gateway.entrypoints.schemas import (
    Price,
    Region,
    Slug,
    Strict,
    amount,
    examples,
    examples_of,
    from_row,
    listing,
)
from gpux_gateway.offers.repository import OfferRow
from gpux_gateway.reliability.repository import SellerReliability
from gpux_gateway.reliability.schemas import OfferReliabilityOut, reliability_out

OFFER_IN = {
    "gpu": "h100-sxm",
    "gpus": 8,
    "price_per_gpu_hour": "2.49",
    "currency": "USD",
    "tier": "on_demand",
    "billing": "second",
    "region": "eu-north",
    "available_until": "2025-09-01T00:00:00Z",
    "interruptible_price_per_gpu_hour": "1.79",
    "provisioning_timeout_seconds": 600,
}
"""An on-demand offer of 8 H100s that also sells them interruptible, as the examples show it."""


class OfferIn(Strict):
    """A seller's offer of GPU-hours."""

    model_config = examples(
        OFFER_IN,
        {
            "gpu": "rtx-4090",
            "gpus": 2,
            "price_per_gpu_hour": "0.39",
            "currency": "EUR",
            "tier": "interruptible",
            "billing": "hour",
        },
    )

    gpu: Slug = Field(description="Catalog id of the GPU model, e.g. `rtx-4090`.")
    gpus: int = Field(ge=1, le=4096, description="How many GPUs are offered.")
    price_per_gpu_hour: Price = Field(description="Asking price per GPU-hour.")
    currency: Currency
    tier: Tier
    billing: BillingGranularity
    region: Region | None = None
    min_hours: int | None = Field(default=None, ge=1, le=8760)
    available_until: AwareDatetime | None = None
    interruptible_price_per_gpu_hour: Price | None = Field(
        default=None,
        description="With `tier` on_demand only: also sell the same GPUs as interruptible"
        " leases at this price (at most `price_per_gpu_hour`); they run on free GPUs and are"
        " interrupted with notice when an on-demand buyer needs them.",
    )
    interruption_notice_seconds: int = Field(
        default=DEFAULT_NOTICE_SECONDS,
        ge=DEFAULT_NOTICE_SECONDS,
        le=MAX_NOTICE_SECONDS,
        description="How long before an interruption its lease is told (120 s to 1 day).",
    )
    provisioning_timeout_seconds: int = Field(
        default=DEFAULT_PROVISIONING_TIMEOUT_SECONDS,
        ge=0,
        le=MAX_PROVISIONING_TIMEOUT_SECONDS,
        description="How long after a lease starts the seller has to post its access details"
        " before the lease fails, charged nothing (docs/DELIVERY.md): 0 means the machines are"
        f" ready at the lease's start (charged from then), else {MIN_PROVISIONING_TIMEOUT_SECONDS}"
        f" s to 1 day; {DEFAULT_PROVISIONING_TIMEOUT_SECONDS} s unless stated.",
    )


class OfferBatchIn(Strict):
    """Many offers in one request: accepted together or not at all."""

    model_config = examples({"offers": examples_of(OfferIn)})

    offers: list[OfferIn] = Field(min_length=1, max_length=500)


class OfferChange(Strict):
    """A new price, interruptible price or capacity for an offer (at least one)."""

    model_config = examples({"price_per_gpu_hour": "2.29"}, {"gpus": 16})

    price_per_gpu_hour: Price | None = Field(
        default=None, description="The new price of the offer's `tier`."
    )
    gpus: int | None = Field(
        default=None,
        ge=1,
        le=4096,
        description="The new capacity; below what is leased now it takes effect as leases end.",
    )
    interruptible_price_per_gpu_hour: Price | None = Field(
        default=None, description="A new interruptible price (an on-demand offer only)."
    )


STATUS_DESCRIPTION = (
    "Where the offer stands: `pending` (submitted, pricing has not decided), `accepted`"
    " (pricing validated it; on its way to the book), `live` (on the book with free GPUs),"
    " `exhausted` (on the book, every GPU leased now: live again when a lease gives GPUs"
    " back), `rejected` (refused by pricing, `reason` says why), `withdrawn` (taken off by"
    " its seller) or `expired` (`available_until` passed). The last three are final."
)


class OfferOut(BaseModel):
    """An offer as its seller sees it."""

    model_config = examples(
        {
            "id": "01JWQY1TWRSQ9BRBPPDJ4A5T1C",
            "gpu": "h100-sxm",
            "gpus": 8,
            "capacity_gpus": 8,
            "leased_gpus": 2,
            "remaining_gpus": 6,
            "price_per_gpu_hour": "2.49",
            "interruptible_price_per_gpu_hour": "1.79",
            "interruption_notice_seconds": 120,
            "provisioning_timeout_seconds": 600,
            "currency": "USD",
            "tier": "on_demand",
            "billing": "second",
            "region": "eu-north",
            "min_hours": None,
            "available_until": "2025-09-01T00:00:00Z",
            "status": "live",
            "reason": None,
            "reliability": examples_of(OfferReliabilityOut)[0],
            "created_at": "2025-06-02T09:02:02Z",
            "updated_at": "2025-06-02T09:41:17Z",
        }
    )

    id: str
    gpu: str
    gpus: int = Field(description="The capacity the seller asked for (as pricing accepted it).")
    capacity_gpus: int = Field(
        description="The pool's GPUs as the book holds them (`gpus` until the book reports)."
    )
    leased_gpus: int = Field(
        description="GPUs held by leases now (until the book reports: `gpus` less the free)."
    )
    remaining_gpus: int = Field(description="Free now: what can be sold (capacity − leased).")
    price_per_gpu_hour: DecimalAmount = Field(description="The price of the offer's `tier`.")
    interruptible_price_per_gpu_hour: DecimalAmount | None = Field(
        description="With tier on_demand: the price of the same GPUs sold interruptible."
    )
    interruption_notice_seconds: int = Field(
        description="How long before an interruption its lease is told."
    )
    provisioning_timeout_seconds: int = Field(
        description="How long after a lease starts the seller has to post its access (0: the"
        " machines are ready at the start)."
    )
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
    reliability: OfferReliabilityOut = Field(
        description="How the offer's leases and its seller's went: leases ready in time,"
        " failed and reclaimed as billing counted them, and the rate they make (null until"
        " something is counted; zeros before)."
    )
    created_at: datetime
    updated_at: datetime


class OfferBatchOut(BaseModel):
    """The offers a bulk request created, in request order."""

    model_config = listing(OfferOut)

    items: list[OfferOut]


def offer_out(row: OfferRow, record: SellerReliability) -> OfferOut:
    """The seller's view of a stored offer, its pool as the book last reported it, with the
    offer's and the seller's reliability from ``record``."""
    pool = pool_shown(
        gpus=row.gpus,
        remaining_gpus=row.remaining_gpus,
        capacity_gpus=row.capacity_gpus,
        leased_gpus=row.leased_gpus,
    )
    interruptible = row.interruptible_price_micros
    return from_row(
        OfferOut,
        row,
        price_per_gpu_hour=amount(row.price_micros),
        interruptible_price_per_gpu_hour=None if interruptible is None else amount(interruptible),
        capacity_gpus=pool.capacity_gpus,
        leased_gpus=pool.leased_gpus,
        reliability=reliability_out(record, row.id),
    )
