"""Routes /v1/gpus, /v1/models, /v1/estimates and /v1/recommendations.

Public reference data from the catalog topics: no authentication, but each client address is
rate-limited. Each route answers 503 until the catalog was read (checked before anything else).
"""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Body, Path, Query

from gpux_contracts.money import Currency
from gpux_gateway.catalog import service
from gpux_gateway.catalog.schemas import (
    EstimateIn,
    EstimateOut,
    GpuList,
    GpuOut,
    ModelList,
    RecommendationList,
    RecommendationQuery,
)
from gpux_gateway.entrypoints.dependencies import AnonymousLimit, GatewayDep
from gpux_gateway.entrypoints.schemas import problem_responses

router = APIRouter(prefix="/v1", tags=["catalog"], dependencies=[AnonymousLimit])

UNAVAILABLE = problem_responses(
    (503, "The catalog has not been read from Kafka yet (retry shortly)")
)
PriceCurrency = Annotated[Currency, Query(description="Show best asks in this currency.")]
TierQuery = Annotated[
    Literal["on_demand", "interruptible"], Query(description="Price the job at this tier.")
]


@router.get("/gpus", response_model=GpuList, responses=UNAVAILABLE, summary="Every GPU model")
async def list_gpus(gw: GatewayDep, currency: PriceCurrency = Currency.USD) -> GpuList:
    service.require_loaded(gw.views.catalog)
    return service.gpus(gw.views.catalog, await gw.market_data.quotes(), currency)


@router.get("/gpus/{gpu_id}", response_model=GpuOut, responses=UNAVAILABLE, summary="One GPU model")
async def get_gpu(
    gpu_id: Annotated[str, Path(max_length=64)],
    gw: GatewayDep,
    currency: PriceCurrency = Currency.USD,
) -> GpuOut:
    service.require_loaded(gw.views.catalog)
    return service.gpu(gw.views.catalog, gpu_id, await gw.market_data.quotes(), currency)


@router.get("/models", response_model=ModelList, responses=UNAVAILABLE, summary="Known open models")
async def list_models(gw: GatewayDep) -> ModelList:
    service.require_loaded(gw.views.catalog)
    return service.models(gw.views.catalog)


@router.post(
    "/estimates",
    response_model=EstimateOut,
    responses=UNAVAILABLE,
    summary="Fine-tuning VRAM per GPU, which GPUs fit, and job hours",
)
async def create_estimate(
    body: Annotated[EstimateIn, Body()],
    gw: GatewayDep,
    currency: PriceCurrency = Currency.USD,
    tier: TierQuery = "on_demand",
) -> EstimateOut:
    service.require_loaded(gw.views.catalog)
    prices = service.live_prices(await gw.market_data.quotes(), currency, tier)
    return service.estimate(gw.views.catalog, body, prices)


@router.get(
    "/recommendations",
    response_model=RecommendationList,
    responses=UNAVAILABLE,
    summary="GPUs that fit a model and method, best first",
)
async def list_recommendations(
    query: Annotated[RecommendationQuery, Query()], gw: GatewayDep
) -> RecommendationList:
    service.require_loaded(gw.views.catalog)
    prices = service.live_prices(await gw.market_data.quotes(), query.currency, query.tier)
    return service.recommend(gw.views.catalog, query, prices, query.tier)
