"""Request and response bodies of the market data and market session routes."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

from pydantic import BaseModel, Field, StringConstraints

from gpux_contracts.market import MarketState
from gpux_contracts.money import Currency, DecimalAmount
from gpux_contracts.offers import Tier
from gpux_gateway.entrypoints.schemas import PRINTABLE, Strict


class AskOut(BaseModel):
    """The cheapest offer, in the currency asked for."""

    offer_id: str
    price: DecimalAmount = Field(description="Per GPU-hour, in `currency`.")
    currency: Currency
    offered_price: DecimalAmount = Field(description="As the seller priced it.")
    offered_currency: Currency
    gpus: int = Field(description="GPUs available at this price.")


class LevelOut(BaseModel):
    """GPUs offered at one price."""

    price: DecimalAmount
    gpus: int


class PriceOut(BaseModel):
    """One book: GPU model, tier and region (`*` = every region)."""

    gpu: str
    tier: str
    region: str
    currency: Currency
    best_ask: AskOut | None
    depth: list[LevelOut]
    as_of: str


class PriceList(BaseModel):
    """Books with their best ask."""

    items: list[PriceOut]


class IntervalParam(StrEnum):
    """Candle widths."""

    MINUTE = "1m"
    HOUR = "1h"
    DAY = "1d"


class CandleOut(BaseModel):
    """Trades of one interval: prices per GPU-hour in the currency asked for."""

    start: str = Field(description="Start of the interval (UTC).")
    open: DecimalAmount
    high: DecimalAmount
    low: DecimalAmount
    close: DecimalAmount = Field(description="Price of the latest trade by execution time.")
    gpus: int = Field(description="GPUs traded in the interval.")


class HistoryOut(BaseModel):
    """Candles of one book, oldest first (at most the latest 200)."""

    gpu: str
    tier: Tier
    interval: IntervalParam
    currency: Currency
    vwap_24h: DecimalAmount | None = Field(
        description="Volume-weighted price over the 24 h up to the book's latest trade."
    )
    candles: list[CandleOut]


class MarketStateIn(Strict):
    """Open or halt trading for the whole market (`all`) or one GPU model."""

    scope: Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9.-]{0,63}$")] = Field(
        description="`all` for every GPU model, else a GPU id."
    )
    state: MarketState
    reason: (
        Annotated[str, StringConstraints(min_length=1, max_length=200, pattern=PRINTABLE)] | None
    ) = None


class MarketStateAccepted(BaseModel):
    """The change is on its way to the market (matching applies it within moments)."""

    event_id: str
    scope: str
    state: MarketState
    reason: str | None


class MarketOut(BaseModel):
    """Whether trading is open: for the whole market and each GPU model with its own state."""

    all: MarketState = Field(description="The whole market; `halted` halts every GPU model.")
    gpus: dict[str, MarketState] = Field(
        description="GPU models with a state of their own; any other is as `all` says."
    )


class BookLevelOut(BaseModel):
    """GPUs resting at one price."""

    price: DecimalAmount = Field(description="Per GPU-hour, in the book's `currency`.")
    gpus: int = Field(description="GPUs resting at this price.")
    orders: int = Field(description="Resting bids (bids) or live offers (asks) at this price.")


class OrderBookOut(BaseModel):
    """Both sides of one book, best first, at most `depth` levels each."""

    gpu: str
    tier: Tier
    currency: Currency
    bids: list[BookLevelOut] = Field(
        description="Highest first: bids of this tier and bids for `any` tier."
    )
    asks: list[BookLevelOut] = Field(description="Lowest first: live offers of this tier.")
    depth: int = Field(description="The most levels shown per side.")
    sequence: int | None = Field(
        description="Matching's command sequence of this state; null: nothing ever rested."
    )
    as_of: str | None = Field(description="When the book last changed; null: never.")
