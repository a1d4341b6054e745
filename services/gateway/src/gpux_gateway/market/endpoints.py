"""Routes /v1/prices (best asks, depth, candles), /v1/market and /v1/admin/market (sessions) and
/v1/orderbook/{gpu}: public market data, rate-limited per client address."""

from __future__ import annotations

from functools import partial
from typing import Annotated

from fastapi import APIRouter, Path, Query
from fastapi.responses import JSONResponse

from gpux_contracts.money import Currency
from gpux_contracts.offers import Tier
from gpux_gateway.entrypoints.dependencies import (
    AnonymousLimit,
    GatewayDep,
    PrincipalDep,
    UnitOfWorkDep,
)
from gpux_gateway.entrypoints.schemas import GpuId, problem_responses
from gpux_gateway.market import service
from gpux_gateway.market.schemas import (
    HistoryOut,
    IntervalParam,
    MarketOut,
    MarketStateAccepted,
    MarketStateIn,
    OrderBookOut,
    PriceList,
)
from gpux_gateway.service.access import admin_only

router = APIRouter(prefix="/v1")
public = partial(router.get, dependencies=[AnonymousLimit], tags=["market data"])
"""A route of public market data: anyone may read it, rate-limited per client address."""

CurrencyQuery = Annotated[Currency, Query(description="Show prices in this currency.")]
RegionQuery = Annotated[str, Query(max_length=30, pattern=r"^(\*|[a-z0-9-]{1,30})$")]
MARKET_UNAVAILABLE = problem_responses(
    (503, "The market state has not been read from Kafka yet (retry shortly)")
)
BOOK_PROBLEMS = problem_responses(
    (503, "The catalog or the book has not been read from Kafka yet (retry shortly)"),
)


@public(
    "/prices",
    response_model=PriceList,
    summary="Best ask per GPU model and tier",
)
async def list_prices(
    gw: GatewayDep, currency: CurrencyQuery = Currency.USD, region: RegionQuery = "*"
) -> PriceList:
    quotes = await gw.market_data.quotes()
    return service.price_list((q for q in quotes if q.region == region), currency)


@public(
    "/prices/{gpu}",
    response_model=PriceList,
    summary="Best ask and depth of one GPU model, every tier and region",
)
async def get_gpu_prices(
    gpu: GpuId, gw: GatewayDep, currency: CurrencyQuery = Currency.USD
) -> PriceList:
    service.require_known_gpu(gw.views.catalog, gpu)
    return service.price_list(await gw.market_data.gpu_quotes(gpu), currency)


@public(
    "/prices/{gpu}/history",
    response_model=HistoryOut,
    summary="OHLC candles and 24 h volume-weighted price of one GPU model and tier",
)
async def get_price_history(
    gpu: GpuId,
    gw: GatewayDep,
    interval: Annotated[IntervalParam, Query(description="Candle width.")] = IntervalParam.HOUR,
    tier: Annotated[Tier, Query(description="Offer tier.")] = Tier.ON_DEMAND,
    currency: CurrencyQuery = Currency.USD,
) -> HistoryOut:
    service.require_known_gpu(gw.views.catalog, gpu)
    raw = await gw.market_data.candles(gpu, tier.value, interval.value)
    return service.history_out(raw, gpu, tier, interval, currency)


@router.post(
    "/admin/market",
    status_code=202,
    response_model=MarketStateAccepted,
    tags=["admin"],
    summary="Open or halt trading (all GPU models or one)",
)
async def set_market(body: MarketStateIn, who: PrincipalDep, uow: UnitOfWorkDep) -> JSONResponse:
    admin_only(who)
    accepted = service.set_state(uow, body)
    return JSONResponse(accepted.model_dump(mode="json"), status_code=202)


@public(
    "/market",
    response_model=MarketOut,
    responses=MARKET_UNAVAILABLE,
    summary="Whether trading is open, for all GPU models and each",
)
async def get_market(gw: GatewayDep) -> MarketOut:
    return service.market_state(gw.views.sessions)


@public(
    "/orderbook/{gpu}",
    response_model=OrderBookOut,
    responses=BOOK_PROBLEMS,
    summary="Aggregated bid and ask levels of one GPU model and tier",
)
async def get_orderbook(
    gpu: Annotated[str, Path(max_length=64)],
    gw: GatewayDep,
    tier: Annotated[Tier, Query(description="The book's tier.")] = Tier.ON_DEMAND,
    currency: CurrencyQuery = Currency.EUR,
) -> OrderBookOut:
    views = gw.views
    return service.orderbook(views.catalog, views.books, gpu=gpu, tier=tier, currency=currency)
