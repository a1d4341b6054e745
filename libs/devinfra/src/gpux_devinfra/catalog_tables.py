"""Rich tables of the catalog answers (presentation only: the figures come from the API)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from rich import box
from rich.table import Table

DASH = "—"


def _gb(value: float) -> str:
    return f"{value:,.1f}"


def price_cell(gpu: dict[str, Any]) -> str:
    """`from 0.33 USD`: the cheapest tier's best ask, else a dash (never invented)."""
    asks = gpu.get("best_ask")
    if not isinstance(asks, dict) or not asks:
        return DASH
    cheapest = min(asks.values(), key=lambda ask: Decimal(str(ask["price"])))
    return f"from {cheapest['price']} {cheapest['currency']}"


def gpu_table(gpus: list[dict[str, Any]]) -> Table:
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
            gpu["name"],
            gpu["architecture"],
            f"{gpu['memory_gb']:g} GB",
            f"{gpu['bandwidth_gb_s']:,.0f} GB/s",
            f"≈ {gpu['fit']['qlora_b']} B",
            f"≈ {gpu['fit']['lora16_b']} B",
            price_cell(gpu),
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


def breakdown_table(estimate: dict[str, Any]) -> Table:
    """Estimated peak VRAM per GPU, by component."""
    model, memory = estimate["model"], estimate["memory"]
    table = Table(title=f"{model['name']}, {estimate['method']}: VRAM per GPU")
    table.add_column("component")
    table.add_column("GiB", justify="right")
    for label, key in BREAKDOWN:
        table.add_row(label, _gb(memory[key]))
    table.add_row("[bold]total[/]", f"[bold]{_gb(memory['total_gb'])}[/]")
    return table


def fits_table(estimate: dict[str, Any]) -> Table:
    """Every GPU with its headroom (and job hours when a dataset was given)."""
    table = Table(title="Which GPUs fit")
    table.add_column("GPU")
    table.add_column("memory", justify="right")
    table.add_column("headroom GiB", justify="right")
    table.add_column("fits")
    with_jobs = estimate.get("dataset") is not None
    if with_jobs:
        table.add_column("hours", justify="right")
    for gpu in estimate["gpus"]:
        row = [
            gpu["gpu_name"],
            f"{gpu['memory_gb']:g} GB",
            _gb(gpu["headroom_gb"]),
            "[green]yes[/]" if gpu["fits"] else "[red]no[/]",
        ]
        if with_jobs:
            job = gpu.get("job")
            row.append(f"{job['hours']:,.2f}" if job else DASH)
        table.add_row(*row)
    return table
