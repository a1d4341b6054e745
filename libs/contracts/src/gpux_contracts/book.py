"""The order book's aggregated levels, published by the matching service on ``market.book``.

One record per book (GPU model × tier), keyed ``gpu|tier`` on a compacted topic, so the
topic holds each book's latest levels. Prices are in the book's reference currency (EUR:
the engine ranks every price by its value in EUR at its FX rates) and, per level, converted
to every currency matching has a rate for. ``sequence`` is matching's command sequence: a
reader keeps, per key, the record with the highest one and drops an older state that
arrives later (a republished outbox row, say).
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import AwareDatetime, Field

from gpux_contracts.base import FrozenModel
from gpux_contracts.events import Payload
from gpux_contracts.money import REFERENCE_CURRENCY, Currency, DecimalAmount
from gpux_contracts.offers import Tier

__all__ = ["BOOK_DEPTH", "REFERENCE_CURRENCY", "BookLevel", "BookLevelsChanged", "book_key"]

BOOK_DEPTH = 20
"""Levels published per side at most (best first)."""


def book_key(gpu: str, tier: str) -> str:
    """The record key of one book on ``market.book``."""
    return f"{gpu}|{tier}"


class BookLevel(FrozenModel):
    """GPUs resting at one price on one side of a book."""

    price: DecimalAmount = Field(
        description="Per GPU-hour in `currency`: the resting prices' value in the reference "
        "currency, to the micro-unit (half-to-even)."
    )
    currency: Currency = Field(description="The book's reference currency (EUR).")
    prices: dict[Currency, DecimalAmount] = Field(
        description="`price` converted at matching's FX rates, by currency (a currency "
        "without a rate is absent)."
    )
    gpus: int = Field(ge=1, description="GPUs resting at this price.")
    orders: int = Field(ge=1, description="Resting orders (bids) or live offers (asks).")


class BookLevelsChanged(Payload):
    """The latest aggregated levels of one book, both sides, best first (latest per key)."""

    event_type: ClassVar[str] = "book.levels_changed"
    schema_version: ClassVar[int] = 1

    gpu: str
    tier: Tier = Field(
        description="The offers' tier; bids are those of this tier plus those for `any`."
    )
    bids: list[BookLevel] = Field(description=f"Highest first, at most {BOOK_DEPTH} levels.")
    asks: list[BookLevel] = Field(description=f"Lowest first, at most {BOOK_DEPTH} levels.")
    depth: int = Field(ge=1, description="The most levels published per side.")
    sequence: int = Field(
        ge=0, description="Matching's command sequence: higher is newer for the same key."
    )
    as_of: AwareDatetime = Field(description="When the command that changed the book ran.")
