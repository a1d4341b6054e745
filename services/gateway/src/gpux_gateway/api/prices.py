"""Live market data: the best ask and depth per GPU model, tier and region."""

from typing import Annotated

from fastapi import APIRouter, Depends, Path, Query
from pydantic import BaseModel, Field

from gpux_contracts.money import Currency, DecimalAmount
from gpux_contracts.prices import BestAskChanged
from gpux_gateway.api.auth import anonymous_limit
from gpux_gateway.context import Gateway
from gpux_gateway.readmodels.prices import all_quotes, gpu_quotes


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


def price_out(quote: BestAskChanged, currency: Currency) -> PriceOut:
    """A quote shown in one currency (levels without a rate for it are left out)."""
    best = None
    if quote.best is not None and currency in quote.best.prices:
        best = AskOut(
            offer_id=quote.best.offer_id,
            price=quote.best.prices[currency],
            currency=currency,
            offered_price=quote.best.price,
            offered_currency=quote.best.currency,
            gpus=quote.best.gpus,
        )
    depth = [
        LevelOut(price=level.prices[currency], gpus=level.gpus)
        for level in quote.depth
        if currency in level.prices
    ]
    return PriceOut(
        gpu=quote.gpu,
        tier=quote.tier,
        region=quote.region,
        currency=currency,
        best_ask=best,
        depth=depth,
        as_of=quote.as_of.isoformat().replace("+00:00", "Z"),
    )


CurrencyQuery = Annotated[Currency, Query(description="Show prices in this currency.")]
RegionQuery = Annotated[str, Query(max_length=30, pattern=r"^(\*|[a-z0-9-]{1,30})$")]


def router(gw: Gateway) -> APIRouter:
    """Routes under /v1/prices (public market data, rate-limited per client address)."""
    api = APIRouter(prefix="/v1/prices", tags=["market data"])

    @api.get(
        "",
        response_model=PriceList,
        dependencies=[Depends(anonymous_limit(gw))],
        summary="Best ask per GPU model and tier",
    )
    async def list_prices(
        currency: CurrencyQuery = Currency.USD, region: RegionQuery = "*"
    ) -> PriceList:
        quotes = [q for q in await all_quotes(gw) if q.region == region]
        return PriceList(items=[price_out(q, currency) for q in quotes])

    @api.get(
        "/{gpu}",
        response_model=PriceList,
        dependencies=[Depends(anonymous_limit(gw))],
        summary="Best ask and depth of one GPU model, every tier and region",
    )
    async def gpu_prices(
        gpu: Annotated[str, Path(pattern=r"^[a-z0-9][a-z0-9.-]{0,63}$")],
        currency: CurrencyQuery = Currency.USD,
    ) -> PriceList:
        return PriceList(items=[price_out(q, currency) for q in await gpu_quotes(gw, gpu)])

    return api
