"""FX rates, published by the pricing service's loader on the compacted ``fx.rates``."""

from __future__ import annotations

from typing import ClassVar

from pydantic import AwareDatetime, Field

from gpux_contracts.events import Payload
from gpux_contracts.money import Currency, DecimalAmount


class RatePublished(Payload):
    """One unit of ``base`` buys ``rate`` units of ``quote``, as of ``as_of``."""

    event_type: ClassVar[str] = "fx.rate_published"
    schema_version: ClassVar[int] = 1

    base: Currency
    quote: Currency
    rate: DecimalAmount = Field(description="Positive decimal string.")
    as_of: AwareDatetime
    source: str = Field(max_length=200, description="Where the rate comes from.")
