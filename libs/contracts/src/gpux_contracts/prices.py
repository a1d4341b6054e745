"""Market data from the pricing service: the best ask and depth of each book."""

from __future__ import annotations

from typing import ClassVar

from pydantic import AwareDatetime, Field

from gpux_contracts.base import FrozenModel
from gpux_contracts.events import Payload
from gpux_contracts.money import Currency, DecimalAmount
from gpux_contracts.reliability import ReliabilityCounts

ALL_REGIONS = "*"
"""The region of a quote that covers every region."""


class PriceLevel(FrozenModel):
    """GPUs offered at one price, shown in each currency."""

    prices: dict[Currency, DecimalAmount] = Field(description="Per GPU-hour, by currency.")
    gpus: int = Field(ge=1)
    reliability: ReliabilityCounts | None = Field(
        default=None,
        description="The summed counts of the distinct sellers offering at this price"
        " (None: none of them has a counted lease yet).",
    )
    min_reliability: DecimalAmount | None = Field(
        default=None,
        description="The lowest reliability rate among this price's sellers that have one.",
    )


class BestAsk(FrozenModel):
    """The cheapest offer of a book."""

    offer_id: str
    price: DecimalAmount = Field(description="As the seller priced it.")
    currency: Currency
    prices: dict[Currency, DecimalAmount] = Field(description="Converted, by currency.")
    gpus: int = Field(ge=1, description="GPUs available at this price.")
    seller_reliability: ReliabilityCounts | None = Field(
        default=None, description="The offer's seller's counts (None: not counted yet)."
    )


class BestAskChanged(Payload):
    """The best ask and depth of one GPU model, tier and region (``*`` = all regions)."""

    event_type: ClassVar[str] = "best_ask.changed"
    schema_version: ClassVar[int] = 1

    gpu: str
    tier: str
    region: str
    best: BestAsk | None = Field(description="None when nothing is offered.")
    depth: list[PriceLevel] = Field(description="Cheapest first, at most 20 levels.")
    as_of: AwareDatetime
