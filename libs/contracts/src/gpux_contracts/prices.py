"""Market data from the pricing service: the best ask and depth of each book."""

from __future__ import annotations

from typing import ClassVar

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field

from gpux_contracts.events import Payload
from gpux_contracts.money import Currency, DecimalAmount

ALL_REGIONS = "*"
"""The region of a quote that covers every region."""


class PriceLevel(BaseModel):
    """GPUs offered at one price, shown in each currency."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    prices: dict[Currency, DecimalAmount] = Field(description="Per GPU-hour, by currency.")
    gpus: int = Field(ge=1)


class BestAsk(BaseModel):
    """The cheapest offer of a book."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    offer_id: str
    price: DecimalAmount = Field(description="As the seller priced it.")
    currency: Currency
    prices: dict[Currency, DecimalAmount] = Field(description="Converted, by currency.")
    gpus: int = Field(ge=1, description="GPUs available at this price.")


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
