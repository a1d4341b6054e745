"""How an offer shows its delivery record: the offer's and its seller's counts and rates."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, Field, WithJsonSchema

from gpux_contracts.money import DecimalAmount
from gpux_contracts.reliability import ReliabilityCounts
from gpux_gateway.entrypoints.schemas import examples
from gpux_gateway.reliability.repository import SellerReliability

RATE_SHOWN_PATTERN = r"^(0\.[0-9]{4}|1\.0000)$"
"""A rate as responses show it: four places, from 0.0000 to 1.0000."""

Rate = Annotated[
    DecimalAmount,
    WithJsonSchema({"type": "string", "pattern": RATE_SHOWN_PATTERN, "examples": ["0.9500"]}),
]
"""A reliability rate (or an order's minimum) as a response shows it."""


SELLER_COUNTS = {"ready_in_time": 46, "failed": 1, "reclaimed": 1, "rate": "0.9583"}
"""A seller's counts over all its offers, as the examples show them."""
OFFER_COUNTS = {"ready_in_time": 11, "failed": 1, "reclaimed": 0, "rate": "0.9166"}
"""One offer's counts, as the examples show them."""


class ReliabilityCountsOut(BaseModel):
    """Leases billing counted, by outcome, and the rate they make."""

    model_config = examples(SELLER_COUNTS)

    ready_in_time: int = Field(
        description="Leases ready before their provisioning deadline (a lease whose offer"
        " states no provisioning timeout is not measured)."
    )
    failed: int = Field(description="Leases that ended failed: reported, or past the deadline.")
    reclaimed: int = Field(description="Interruptible leases the seller reclaimed.")
    rate: Rate | None = Field(
        description="`ready_in_time` over every counted lease, rounded down to four places"
        " (e.g. `0.9500`); null while nothing is counted."
    )


class OfferReliabilityOut(BaseModel):
    """An offer's delivery record and its seller's, over all the seller's offers
    (docs/DELIVERY.md, "Seller reliability")."""

    model_config = examples({"offer": OFFER_COUNTS, "seller": SELLER_COUNTS})

    offer: ReliabilityCountsOut = Field(description="This offer's leases.")
    seller: ReliabilityCountsOut = Field(
        description="The seller's leases over all its offers: what `min_reliability` of an"
        " order is compared with."
    )


def counts_out(counts: ReliabilityCounts) -> ReliabilityCountsOut:
    """Counts as a response shows them, with their rate (``ReliabilityCounts.rate``)."""
    return ReliabilityCountsOut(**counts.model_dump(), rate=counts.rate())


def reliability_out(record: SellerReliability, offer_id: str) -> OfferReliabilityOut:
    """One offer's record and its seller's (zeros where nothing was counted)."""
    return OfferReliabilityOut(
        offer=counts_out(record.of(offer_id)), seller=counts_out(record.seller)
    )
