"""Request and response bodies of the market data and market session routes."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

from pydantic import BaseModel, Field, StringConstraints

from gpux_contracts.market import MarketState
from gpux_contracts.money import Currency, DecimalAmount
from gpux_contracts.offers import Tier
from gpux_gateway.entrypoints.schemas import PRINTABLE, Strict, examples, examples_of, listing
from gpux_gateway.reliability.schemas import SELLER_COUNTS, Rate, ReliabilityCountsOut

AS_OF = "2025-06-02T09:41:17Z"
"""When the examples' book last changed."""


class AskOut(BaseModel):
    """The cheapest offer, in the currency asked for."""

    model_config = examples(
        {
            "offer_id": "01JWQY1TWRSQ9BRBPPDJ4A5T1C",
            "price": "2.49",
            "currency": "USD",
            "offered_price": "2.49",
            "offered_currency": "USD",
            "gpus": 6,
            "seller_reliability": SELLER_COUNTS,
        }
    )

    offer_id: str
    price: DecimalAmount = Field(description="Per GPU-hour, in `currency`.")
    currency: Currency
    offered_price: DecimalAmount = Field(description="As the seller priced it.")
    offered_currency: Currency
    gpus: int = Field(description="GPUs available at this price.")
    seller_reliability: ReliabilityCountsOut | None = Field(
        description="The offer's seller's leases over all its offers, as billing counted them,"
        " and their rate; null while nothing is counted."
    )


class LevelOut(BaseModel):
    """GPUs offered at one price, and how their sellers deliver."""

    model_config = examples(
        {"price": "2.49", "gpus": 6, "reliability": SELLER_COUNTS, "min_reliability": "0.9583"},
        {
            "price": "2.75",
            "gpus": 16,
            "reliability": {"ready_in_time": 27, "failed": 3, "reclaimed": 0, "rate": "0.9000"},
            "min_reliability": "0.8571",
        },
    )

    price: DecimalAmount
    gpus: int
    reliability: ReliabilityCountsOut | None = Field(
        description="The summed leases of the distinct sellers offering at this price, and"
        " the rate they make together; null while none of them has a counted lease."
    )
    min_reliability: Rate | None = Field(
        description="The lowest rate among this price's sellers that have one: the least"
        " reliable seller a buyer may get here; null while none has."
    )


class PriceOut(BaseModel):
    """One book: GPU model, tier and region (`*` = every region)."""

    model_config = examples(
        {
            "gpu": "h100-sxm",
            "tier": "on_demand",
            "region": "*",
            "currency": "USD",
            "best_ask": examples_of(AskOut)[0],
            "depth": examples_of(LevelOut),
            "as_of": AS_OF,
        }
    )

    gpu: str
    tier: str
    region: str
    currency: Currency
    best_ask: AskOut | None
    depth: list[LevelOut]
    as_of: str


class PriceList(BaseModel):
    """Books with their best ask."""

    model_config = listing(PriceOut)

    items: list[PriceOut]


class IntervalParam(StrEnum):
    """Candle widths."""

    MINUTE = "1m"
    HOUR = "1h"
    DAY = "1d"


class CandleOut(BaseModel):
    """Trades of one interval: prices per GPU-hour in the currency asked for."""

    model_config = examples(
        {
            "start": "2025-06-02T08:00:00Z",
            "open": "2.55",
            "high": "2.60",
            "low": "2.45",
            "close": "2.49",
            "gpus": 14,
        }
    )

    start: str = Field(description="Start of the interval (UTC).")
    open: DecimalAmount
    high: DecimalAmount
    low: DecimalAmount
    close: DecimalAmount = Field(description="Price of the latest trade by execution time.")
    gpus: int = Field(description="GPUs traded in the interval.")


class HistoryOut(BaseModel):
    """Candles of one book, oldest first (at most the latest 200)."""

    model_config = examples(
        {
            "gpu": "h100-sxm",
            "tier": "on_demand",
            "interval": "1h",
            "currency": "USD",
            "vwap_24h": "2.5131",
            "candles": [
                {
                    "start": "2025-06-02T07:00:00Z",
                    "open": "2.60",
                    "high": "2.60",
                    "low": "2.55",
                    "close": "2.55",
                    "gpus": 6,
                },
                *examples_of(CandleOut),
            ],
        }
    )

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

    model_config = examples(
        {"scope": "all", "state": "halted", "reason": "scheduled maintenance"},
        {"scope": "h100-sxm", "state": "open"},
    )

    scope: Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9.-]{0,63}$")] = Field(
        description="`all` for every GPU model, else a GPU id."
    )
    state: MarketState
    reason: (
        Annotated[str, StringConstraints(min_length=1, max_length=200, pattern=PRINTABLE)] | None
    ) = None


class MarketStateAccepted(BaseModel):
    """The change is on its way to the market (matching applies it within moments)."""

    model_config = examples(
        {
            "event_id": "01JWQYE8BGDCJJP0KWPBSVCSH2",
            "scope": "all",
            "state": "halted",
            "reason": "scheduled maintenance",
        }
    )

    event_id: str
    scope: str
    state: MarketState
    reason: str | None


class MarketOut(BaseModel):
    """Whether trading is open: for the whole market and each GPU model with its own state."""

    model_config = examples({"all": "open", "gpus": {"b200": "halted"}})

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

    model_config = examples(
        {
            "gpu": "h100-sxm",
            "tier": "on_demand",
            "currency": "USD",
            "bids": [
                {"price": "2.40", "gpus": 4, "orders": 2},
                {"price": "2.20", "gpus": 8, "orders": 1},
            ],
            "asks": [
                {"price": "2.49", "gpus": 6, "orders": 1},
                {"price": "2.75", "gpus": 16, "orders": 3},
            ],
            "depth": 20,
            "sequence": 18422,
            "as_of": AS_OF,
        }
    )

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
