"""FX rates, published by the pricing service's loader on the compacted ``fx.rates``."""

from __future__ import annotations

from datetime import datetime
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


def supersedes(candidate_as_of: datetime, current_as_of: datetime | None) -> bool:
    """The FX rule, the same in every service: a rate replaces the one held for its pair
    unless that one is newer (an equal time replaces it: a republished rate is the same)."""
    return current_as_of is None or candidate_as_of >= current_as_of
