"""Estimates and recommendations on the catalog the gateway read from Kafka, priced live.

Everything here comes from the catalog topics (see ``readmodels.catalog``); the figures are
computed by the pure estimator (``gpux_estimator``) on that data, with each GPU model's live
best ask (pricing's quotes) as its price.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator, Mapping

from gpux_contracts.money import Currency, quantize
from gpux_contracts.prices import ALL_REGIONS, BestAskChanged
from gpux_estimator import (
    CatalogError,
    Dataset,
    GpuHeadroom,
    JobEstimate,
    MemoryBreakdown,
    ModelArch,
    Price,
    TrainingSettings,
    check_gpus,
    custom_model,
    estimate_job,
    estimate_memory,
    rank_gpus_for_job,
    training_flops,
)
from gpux_gateway.catalog.schemas import (
    DatasetOut,
    EstimateForSize,
    EstimateIn,
    EstimateOut,
    GpuCheck,
    GpuList,
    GpuOut,
    JobOut,
    MemoryOut,
    ModelList,
    ModelOut,
    ModelRef,
    Recommendation,
    RecommendationList,
    RecommendationQuery,
    TierAsk,
)
from gpux_gateway.entrypoints.schemas import field_error
from gpux_gateway.readmodels.catalog import CatalogView
from gpux_platform.problems import ProblemError

RETRY_AFTER_S = 5


@contextlib.contextmanager
def domain_errors_as_422(*loc: str) -> Iterator[None]:
    """The estimator's own input checks answer 422 like the request's, with ``errors[]``
    (at ``loc``: ``body`` or ``query``, and the field when it is known)."""
    try:
        yield
    except CatalogError as exc:
        raise field_error(loc, str(exc)) from exc


def require_loaded(view: CatalogView) -> None:
    """503 until the view has read the catalog topics (and they hold a catalog)."""
    if not view.holds_catalog:
        raise ProblemError(
            503,
            "catalog-unavailable",
            "Service unavailable",
            "the catalog has not been loaded from Kafka yet; retry shortly",
            headers={"Retry-After": str(RETRY_AFTER_S)},
        )


def find_model(view: CatalogView, model_id: str, where: str) -> ModelArch:
    """A catalog model by id; 422 for an unknown id (it is the request that is wrong), at
    ``where.model``."""
    with domain_errors_as_422(where, "model"):
        return view.model_catalog.get(model_id)


def model_of(view: CatalogView, body: EstimateIn) -> ModelArch:
    """The model an estimate request names, or the one derived from its size."""
    if isinstance(body, EstimateForSize):
        with domain_errors_as_422("body", "params_b"):
            return custom_model(body.params_b)
    return find_model(view, body.model, "body")


def model_ref(model: ModelArch) -> ModelRef:
    """The short description of the model an answer is about."""
    return ModelRef(id=model.id, name=model.name, params_b=model.params_b, custom=model.custom)


def _gb(value: float) -> float:
    # Presentation only: `fits` and the ranking are decided on the unrounded figures.
    return round(value, 2)


def job_out(job: JobEstimate, price: Price | None) -> JobOut:
    """Hours of one job, and its cost when the GPU has a live best ask."""
    return JobOut(
        num_gpus=job.num_gpus,
        hours=float(job.hours),
        gpu_hours=float(job.gpu_hours),
        price_per_gpu_hour=None if price is None else price.amount,
        cost=None if job.cost is None else quantize(job.cost),
        currency=None if price is None else Currency(price.currency),
    )


def dataset_out(dataset: Dataset) -> DatasetOut:
    """The dataset as answered."""
    return DatasetOut(
        examples=dataset.examples,
        avg_tokens=dataset.avg_tokens,
        epochs=dataset.epochs,
        tokens=dataset.tokens,
    )


def memory_out(memory: MemoryBreakdown) -> MemoryOut:
    """The VRAM breakdown as answered."""
    return MemoryOut(
        weights_gb=_gb(memory.weights_gb),
        adapters_gb=_gb(memory.adapters_gb),
        gradients_gb=_gb(memory.gradients_gb),
        optimizer_gb=_gb(memory.optimizer_gb),
        activations_gb=_gb(memory.activations_gb),
        overhead_gb=_gb(memory.overhead_gb),
        total_gb=_gb(memory.total_gb),
        trainable_params=memory.trainable_params,
    )


def gpu_check(row: GpuHeadroom, job: JobEstimate | None, price: Price | None) -> GpuCheck:
    """One GPU's headroom (and job time) as answered."""
    return GpuCheck(
        gpu_id=row.gpu_id,
        gpu_name=row.gpu_name,
        memory_gb=row.memory_gb,
        required_gb=_gb(row.required_gb),
        headroom_gb=_gb(row.headroom_gb),
        headroom_pct=round(row.headroom_pct, 1),
        fits=row.fits,
        job=None if job is None else job_out(job, price),
    )


def estimate(view: CatalogView, body: EstimateIn, prices: Mapping[str, Price]) -> EstimateOut:
    """The detailed estimate of one request, on the GPUs the view holds."""
    model = model_of(view, body)
    with domain_errors_as_422("body"):
        settings = TrainingSettings(**body.training())
        dataset = None if body.dataset is None else Dataset(**body.dataset.model_dump())
    memory = estimate_memory(model, settings)
    specs = {gpu.id: gpu for gpu in view.gpu_catalog}
    checks = []
    for row in check_gpus(memory, view.gpu_catalog):
        job = None
        if dataset is not None and row.fits:
            price = prices.get(row.gpu_id)
            job = estimate_job(model, settings, dataset, specs[row.gpu_id], price)
        checks.append(gpu_check(row, job, prices.get(row.gpu_id)))
    return EstimateOut(
        model=model_ref(model),
        method=settings.method,
        memory=memory_out(memory),
        gpus=checks,
        dataset=None if dataset is None else dataset_out(dataset),
        training_flops=None if dataset is None else training_flops(model, settings, dataset),
    )


def recommend(
    view: CatalogView, query: RecommendationQuery, prices: Mapping[str, Price], tier: str
) -> RecommendationList:
    """GPUs that hold the job: cheapest first where offered, then fastest first."""
    model = find_model(view, query.model, "query")
    with domain_errors_as_422("query"):
        settings = TrainingSettings(
            method=query.method,
            seq_len=query.seq_len,
            micro_batch=query.micro_batch,
            lora_rank=query.lora_rank,
            num_gpus=query.num_gpus,
        )
        dataset = Dataset(query.examples, query.avg_tokens, query.epochs)
    ranked = rank_gpus_for_job(model, settings, dataset, view.gpu_catalog, prices=prices)
    items = [
        Recommendation(
            rank=position,
            gpu_id=entry.gpu.id,
            gpu_name=entry.gpu.name,
            memory_gb=entry.gpu.memory_gb,
            headroom_gb=_gb(entry.headroom.headroom_gb),
            headroom_pct=round(entry.headroom.headroom_pct, 1),
            num_gpus=entry.job.num_gpus,
            hours=float(entry.job.hours),
            gpu_hours=float(entry.job.gpu_hours),
            price_per_gpu_hour=(
                None if entry.gpu.id not in prices else prices[entry.gpu.id].amount
            ),
            cost=None if entry.job.cost is None else quantize(entry.job.cost),
            currency=None if entry.job.currency is None else Currency(entry.job.currency),
        )
        for position, entry in enumerate(ranked, start=1)
    ]
    return RecommendationList(
        model=model_ref(model),
        method=settings.method,
        ranked_by="cost" if prices else "hours",
        tier=tier,
        required_gb=_gb(estimate_memory(model, settings).total_gb),
        dataset=dataset_out(dataset),
        items=items,
    )


def best_asks_by_gpu(
    quotes: Iterable[BestAskChanged], currency: Currency
) -> dict[str, dict[str, TierAsk]]:
    """The all-regions best ask of every GPU model and tier, in one currency."""
    asks: dict[str, dict[str, TierAsk]] = {}
    for quote in quotes:
        if quote.region != ALL_REGIONS or quote.best is None:
            continue
        price = quote.best.prices.get(currency)
        if price is not None:
            asks.setdefault(quote.gpu, {})[quote.tier] = TierAsk(
                price=price, currency=currency, gpus=quote.best.gpus
            )
    return asks


def live_prices(
    quotes: Iterable[BestAskChanged], currency: Currency, tier: str
) -> dict[str, Price]:
    """Each GPU model's live best ask in one tier and currency, as the estimator's prices."""
    asks = best_asks_by_gpu(quotes, currency)
    return {gpu: Price(ask[tier].price, currency.value) for gpu, ask in asks.items() if tier in ask}


def gpus(view: CatalogView, quotes: Iterable[BestAskChanged], currency: Currency) -> GpuList:
    """Every GPU model with its best ask per tier."""
    asks = best_asks_by_gpu(quotes, currency)
    return GpuList(
        items=[
            GpuOut.model_validate({**g.model_dump(), "best_ask": asks.get(g.id, {})})
            for g in view.gpus()
        ]
    )


def gpu(
    view: CatalogView, gpu_id: str, quotes: Iterable[BestAskChanged], currency: Currency
) -> GpuOut:
    """One GPU model with its best ask per tier (404 when the catalog has no such model)."""
    found = view.gpu(gpu_id)
    if found is None:
        raise ProblemError(404, "not-found", "Not found", f"no GPU model {gpu_id!r}")
    asks = best_asks_by_gpu(quotes, currency)
    return GpuOut.model_validate({**found.model_dump(), "best_ask": asks.get(found.id, {})})


def models(view: CatalogView) -> ModelList:
    """Every model architecture, smallest first."""
    return ModelList(items=[ModelOut.model_validate(m.model_dump()) for m in view.models()])
