"""Rich tables of the catalog answers, from the SDK's models (presentation only: the figures
come from the API; prices are shown to their currency's precision, ``gpux_devinfra.amounts``)."""

from __future__ import annotations

from decimal import Decimal

from rich import box
from rich.table import Table

from gpux_devinfra.amounts import DASH, money
from gpux_sdk.models.estimate_out import EstimateOut
from gpux_sdk.models.gpu_out import GpuOut
from gpux_sdk.models.gpu_out_best_ask import GpuOutBestAsk
from gpux_sdk.models.recommendation import Recommendation
from gpux_sdk.models.recommendation_list import RecommendationList
from gpux_sdk.types import Unset


def _gb(value: float) -> str:
    return f"{value:,.1f}"


def price_cell(asks: GpuOutBestAsk | Unset) -> str:
    """`from $0.33`: the cheapest tier's best ask, else a dash (never invented)."""
    if isinstance(asks, Unset) or not asks.additional_properties:
        return DASH
    cheapest = min(asks.additional_properties.values(), key=lambda ask: Decimal(ask.price))
    return f"from {money(cheapest.price, cheapest.currency)}"


def gpu_table(gpus: list[GpuOut]) -> Table:
    """The reference page's table: memory, bandwidth, largest base model, best price."""
    # Light borders and short headers keep all seven columns on an 80-column terminal.
    table = Table(
        title="GPUs for fine-tuning open models",
        box=box.SIMPLE_HEAD,
        padding=0,
        show_edge=False,
    )
    table.add_column("GPU", no_wrap=True)
    table.add_column("architecture", no_wrap=True)
    for column in ("memory", "bandwidth", "QLoRA", "LoRA\n16-bit"):
        table.add_column(column, justify="right", no_wrap=True)
    table.add_column("price/h", justify="right")
    for gpu in gpus:
        table.add_row(
            gpu.name,
            gpu.architecture,
            f"{gpu.memory_gb:g} GB",
            f"{gpu.bandwidth_gb_s:,.0f} GB/s",
            f"≈ {gpu.fit.qlora_b} B",
            f"≈ {gpu.fit.lora16_b} B",
            price_cell(gpu.best_ask),
        )
    table.caption = (
        "QLoRA, LoRA 16-bit: the largest base model (billions of parameters) at 80 % of memory."
        " price/h: best live ask per GPU-hour."
    )
    return table


BREAKDOWN = (
    ("base weights", "weights_gb"),
    ("adapters", "adapters_gb"),
    ("gradients", "gradients_gb"),
    ("optimizer states", "optimizer_gb"),
    ("activations", "activations_gb"),
    ("CUDA and framework overhead", "overhead_gb"),
)


def breakdown_table(estimate: EstimateOut) -> Table:
    """Estimated peak VRAM per GPU, by component."""
    memory = estimate.memory
    table = Table(title=f"{estimate.model.name}, {estimate.method}: VRAM per GPU")
    table.add_column("component")
    table.add_column("GiB", justify="right")
    for label, key in BREAKDOWN:
        table.add_row(label, _gb(getattr(memory, key)))
    table.add_row("[bold]total[/]", f"[bold]{_gb(memory.total_gb)}[/]")
    return table


def fits_table(estimate: EstimateOut) -> Table:
    """Every GPU with its headroom (and job hours when a dataset was given)."""
    table = Table(title="Which GPUs fit")
    table.add_column("GPU")
    table.add_column("memory", justify="right")
    table.add_column("headroom GiB", justify="right")
    table.add_column("fits")
    with_jobs = estimate.dataset is not None
    if with_jobs:
        table.add_column("hours", justify="right")
    for gpu in estimate.gpus:
        row = [
            gpu.gpu_name,
            f"{gpu.memory_gb:g} GB",
            _gb(gpu.headroom_gb),
            "[green]yes[/]" if gpu.fits else "[red]no[/]",
        ]
        if with_jobs:
            row.append(f"{gpu.job.hours:,.2f}" if gpu.job else DASH)
        table.add_row(*row)
    return table


def _given(value: str | Unset | None) -> str | None:
    return None if isinstance(value, Unset) else value


def _recommendation_row(item: Recommendation) -> list[str]:
    currency = _given(item.currency)
    return [
        str(item.rank),
        item.gpu_name,
        f"{item.memory_gb:g} GB",
        f"{_gb(item.headroom_gb)} ({item.headroom_pct:.0f} %)",
        str(item.num_gpus),
        f"{item.hours:,.2f}",
        f"{item.gpu_hours:,.2f}",
        money(_given(item.price_per_gpu_hour), currency),
        money(_given(item.cost), currency),
    ]


def recommendations_table(answer: RecommendationList) -> Table:
    """The GPUs that hold the job, in the API's order: cheapest first while any has an offer
    in the tier (those without one after them), else fastest first."""
    table = Table(
        title=f"{answer.model.name}, {answer.method}: GPUs that hold {answer.required_gb:,.1f} GiB",
        box=box.SIMPLE_HEAD,
        show_edge=False,
    )
    table.add_column("#", justify="right")
    table.add_column("GPU", no_wrap=True)
    for column in ("memory", "headroom GiB", "GPUs", "hours", "GPU-hours", "price/GPU-h"):
        table.add_column(column, justify="right", no_wrap=True)
    table.add_column("est. cost", justify="right", no_wrap=True)
    for item in answer.items:
        table.add_row(*_recommendation_row(item))
    dataset = answer.dataset
    order = "cheapest first" if str(answer.ranked_by) == "cost" else "fastest first (no offers)"
    table.caption = (
        f"{order}; {answer.tier} best asks; {dataset.examples:,} examples x"
        f" {dataset.avg_tokens:,} tokens x {dataset.epochs:g} epochs"
        if answer.items
        else "no GPU model holds this job"
    )
    return table
