"""Market history: OHLC candles and the 24 h volume-weighted price of one GPU model and tier.

Pricing keeps the latest candles of each book in Redis, already converted into every
currency; this route picks the one asked for.
"""

import json
from enum import StrEnum
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Query
from pydantic import BaseModel, Field

from gpux_contracts.money import Currency, DecimalAmount
from gpux_gateway.api.auth import anonymous_limit
from gpux_gateway.context import Gateway
from gpux_platform.redis_keys import CANDLES


class IntervalParam(StrEnum):
    """Candle widths."""

    MINUTE = "1m"
    HOUR = "1h"
    DAY = "1d"


class TierParam(StrEnum):
    """Offer tiers."""

    ON_DEMAND = "on_demand"
    INTERRUPTIBLE = "interruptible"


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
    tier: TierParam
    interval: IntervalParam
    currency: Currency
    vwap_24h: DecimalAmount | None = Field(
        description="Volume-weighted price over the 24 h up to the book's latest trade."
    )
    candles: list[CandleOut]


def history_out(
    raw: dict[str, Any] | None,
    gpu: str,
    tier: TierParam,
    interval: IntervalParam,
    currency: Currency,
) -> HistoryOut:
    """Pricing's read model shown in one currency (candles without a rate for it left out)."""
    candles: list[CandleOut] = []
    vwap = None
    if raw is not None:
        vwap = (raw.get("vwap_24h") or {}).get(currency.value)
        for candle in raw.get("candles", []):
            prices = candle["prices"].get(currency.value)
            if prices is not None:
                candles.append(CandleOut(start=candle["start"], gpus=candle["gpus"], **prices))
    return HistoryOut(
        gpu=gpu, tier=tier, interval=interval, currency=currency, vwap_24h=vwap, candles=candles
    )


def router(gw: Gateway) -> APIRouter:
    """GET /v1/prices/{gpu}/history (public market data, rate-limited per client address)."""
    api = APIRouter(prefix="/v1/prices", tags=["market data"])

    @api.get(
        "/{gpu}/history",
        response_model=HistoryOut,
        dependencies=[Depends(anonymous_limit(gw))],
        summary="OHLC candles and 24 h volume-weighted price of one GPU model and tier",
    )
    async def price_history(
        gpu: Annotated[str, Path(pattern=r"^[a-z0-9][a-z0-9.-]{0,63}$")],
        interval: Annotated[IntervalParam, Query(description="Candle width.")] = (
            IntervalParam.HOUR
        ),
        tier: Annotated[TierParam, Query(description="Offer tier.")] = TierParam.ON_DEMAND,
        currency: Annotated[Currency, Query(description="Show prices in this currency.")] = (
            Currency.USD
        ),
    ) -> HistoryOut:
        key = gw.settings.redis_key(CANDLES, gpu, tier.value, interval.value)
        body = await gw.redis.get(key)
        raw = json.loads(body) if body is not None else None
        return history_out(raw, gpu, tier, interval, currency)

    return api
