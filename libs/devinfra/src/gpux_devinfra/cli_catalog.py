"""`gpux gpus`, `gpux fit MODEL`, `gpux recommend MODEL`: the catalog through ``gpux_sdk``.

Anyone may run them (no key): the GPU table, a fine-tuning VRAM estimate, and the GPUs that
hold a job with its time and cost at the live best asks.
"""

from __future__ import annotations

import dataclasses
import re
from enum import StrEnum
from typing import Annotated, Any

import typer
from rich.console import Group

from gpux_devinfra.catalog_tables import (
    breakdown_table,
    fits_table,
    gpu_table,
    recommendations_table,
)
from gpux_devinfra.cli_market import CurrencyOpt
from gpux_devinfra.cli_support import Public, grouped_options
from gpux_devinfra.sdk_client import call
from gpux_sdk.api.catalog import create_estimate, list_gpus, list_recommendations
from gpux_sdk.models.currency import Currency
from gpux_sdk.models.estimate_for_model import EstimateForModel
from gpux_sdk.models.estimate_for_size import EstimateForSize
from gpux_sdk.models.estimate_out import EstimateOut
from gpux_sdk.models.list_recommendations_tier import ListRecommendationsTier
from gpux_sdk.models.method import Method

_SIZE = re.compile(r"^(\d+(?:\.\d+)?)\s*[bB]?$")


class FitMethod(StrEnum):
    """Fine-tuning method, as the estimator names it."""

    QLORA = "qlora"
    LORA = "lora"
    FULL = "full"


class PriceTier(StrEnum):
    """Whose best asks price a job."""

    ON_DEMAND = "on_demand"
    INTERRUPTIBLE = "interruptible"


def gpus_command(*, public: Public) -> None:
    """GPU models: memory, bandwidth, the largest base model for QLoRA / LoRA, best price."""
    public.show(public.ask(lambda client: call(list_gpus.sync_detailed, client).items), gpu_table)


def estimate_body(
    model: str, method: FitMethod, **settings: Any
) -> EstimateForModel | EstimateForSize:
    """The estimate request: a catalog model id, or a bare size such as `13b`."""
    size = _SIZE.match(model)
    if size:
        return EstimateForSize.from_dict(
            {"params_b": float(size.group(1)), "method": method.value, **settings}
        )
    return EstimateForModel.from_dict({"model": model, "method": method.value, **settings})


def _fit_report(answer: EstimateOut) -> Group:
    fitting = [g.gpu_name for g in answer.gpus if g.fits]
    return Group(
        breakdown_table(answer),
        fits_table(answer),
        f"fits on {len(fitting)} of {len(answer.gpus)} GPU models",
    )


ModelArg = Annotated[str, typer.Argument(help="A model id (see /v1/models) or a size: `13b`.")]
MethodOpt = Annotated[FitMethod, typer.Option(help="Fine-tuning method.")]
SeqLen = Annotated[int, typer.Option(min=1, help="Sequence length (tokens).")]
NumGpus = Annotated[int, typer.Option(min=1, help="GPUs, sharded (ZeRO-3/FSDP).")]


def fit_command(
    model: ModelArg,
    *,
    method: MethodOpt,
    seq_len: SeqLen = 2048,
    micro_batch: Annotated[int, typer.Option(min=1, help="Micro-batch size per GPU.")] = 1,
    lora_rank: Annotated[int, typer.Option(min=1, help="LoRA rank.")] = 16,
    num_gpus: NumGpus = 1,
    public: Public,
) -> None:
    """VRAM needed to fine-tune MODEL, component by component, and which GPUs hold it."""
    body = estimate_body(
        model,
        method,
        seq_len=seq_len,
        micro_batch=micro_batch,
        lora_rank=lora_rank,
        num_gpus=num_gpus,
    )
    answer = public.ask(lambda client: call(create_estimate.sync_detailed, client, body=body))
    public.show(answer, _fit_report)


@dataclasses.dataclass(frozen=True)
class Job:
    """The job a recommendation is for: its data set, sequence length and GPUs."""

    examples: Annotated[int, typer.Option(min=1, help="Training examples.")] = 1000
    avg_tokens: Annotated[int, typer.Option(min=1, help="Tokens per example.")] = 1000
    epochs: Annotated[float, typer.Option(min=0.01, help="Passes over the data.")] = 1.0
    seq_len: SeqLen = 2048
    num_gpus: NumGpus = 1


def recommend_command(
    model: Annotated[str, typer.Argument(help="A model id (see `gpux fit` and /v1/models).")],
    *,
    method: MethodOpt,
    currency: CurrencyOpt = "USD",
    tier: Annotated[PriceTier, typer.Option(help="Price the job at this tier.")] = (
        PriceTier.ON_DEMAND
    ),
    job: Job,
    public: Public,
) -> None:
    """GPUs that hold MODEL, with the job's time and cost, cheapest first (GET
    /v1/recommendations).

    The cost is the job's GPU-hours at each GPU model's live best ask in --tier; GPUs with
    no offer come after those with one, fastest first.
    """
    query = {
        "model": model,
        "method": Method(method.value),
        "currency": Currency(currency),
        "tier": ListRecommendationsTier(tier.value),
        **dataclasses.asdict(job),
    }
    answer = public.ask(lambda client: call(list_recommendations.sync_detailed, client, **query))
    public.show(answer, recommendations_table)


def register(app: typer.Typer) -> None:
    """Add these commands to the `gpux` app."""
    app.command("gpus")(grouped_options(gpus_command))
    app.command("fit")(grouped_options(fit_command))
    app.command("recommend")(grouped_options(recommend_command))
