"""The ``gpux`` command: local infrastructure, and the market as the gateway serves it."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from enum import StrEnum
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.table import Table

from gpux_devinfra import infra
from gpux_devinfra.api_client import API_URL_ENV, DEFAULT_API_URL, ApiClient, ApiError
from gpux_devinfra.catalog_tables import breakdown_table, fits_table, gpu_table
from gpux_devinfra.system import InfraError, console

app = typer.Typer(help="gpux: an open exchange for GPU-hours.", no_args_is_help=True)
infra_app = typer.Typer(help="Local Kafka, PostgreSQL and Redis on loopback.", no_args_is_help=True)
app.add_typer(infra_app, name="infra")


@infra_app.command("up")
def infra_up() -> None:
    """Start (or reuse) Kafka, PostgreSQL and Redis; print their endpoints."""
    try:
        endpoints = infra.up()
    except InfraError as exc:
        console.print(f"[red]infra up failed:[/] {exc}")
        raise typer.Exit(1) from None
    table = Table(title="gpux local infrastructure", show_header=True)
    table.add_column("variable")
    table.add_column("value")
    for key, value in endpoints.env().items():
        table.add_row(key, value)
    console.print(table)


@infra_app.command("status")
def infra_status() -> None:
    """Show whether each local service runs and answers (exit 1 if any does not)."""
    rows = infra.status()
    table = Table(title="gpux local infrastructure")
    for column in ("service", "pid", "answers", "endpoint"):
        table.add_column(column)
    for row in rows:
        ok = "[green]yes[/]" if row.answers else "[red]no[/]"
        table.add_row(row.name, str(row.pid or "-"), ok, row.endpoint)
    console.print(table)
    if not all(row.answers and row.pid for row in rows):
        raise typer.Exit(1)


@infra_app.command("down")
def infra_down() -> None:
    """Stop what `gpux infra up` started (by pid file); nothing else is touched."""
    stopped = infra.down()
    console.print(f"stopped: {', '.join(stopped) if stopped else 'nothing was running'}")


@infra_app.command("env")
def infra_env() -> None:
    """Print the endpoints as shell exports (after `up`)."""
    for key, value in infra.up().env().items():
        print(f"export {key}={value}")


ApiUrl = Annotated[
    str, typer.Option("--api", envvar=API_URL_ENV, help="Base URL of the gpux gateway.")
]
AsJson = Annotated[bool, typer.Option("--json", help="Print the API's JSON answer instead.")]
T = TypeVar("T")
_SIZE = re.compile(r"^(\d+(?:\.\d+)?)\s*[bB]?$")


class FitMethod(StrEnum):
    """Fine-tuning method, as the estimator names it."""

    QLORA = "qlora"
    LORA = "lora"
    FULL = "full"


def make_client(api: str) -> ApiClient:
    """The API client the commands use (tests replace it with one on a fake transport)."""
    return ApiClient(api)


def _ask(api: str, call: Callable[[ApiClient], T]) -> T:
    """Run one API call; an error ends the command with one line and exit code 1."""
    try:
        with make_client(api) as client:
            return call(client)
    except ApiError as exc:
        typer.echo(f"gpux: {exc}", err=True)
        raise typer.Exit(1) from None


def _print_json(value: Any) -> None:
    print(json.dumps(value, indent=2, ensure_ascii=False))


@app.command("gpus")
def gpus_command(api: ApiUrl = DEFAULT_API_URL, as_json: AsJson = False) -> None:
    """GPU models: memory, bandwidth, the largest base model for QLoRA / LoRA, best price."""
    gpus = _ask(api, lambda client: client.gpus())
    if as_json:
        _print_json(gpus)
        return
    Console().print(gpu_table(gpus))


def estimate_body(model: str, method: FitMethod, **settings: Any) -> dict[str, Any]:
    """The estimate request: a catalog model id, or a bare size such as `13b`."""
    size = _SIZE.match(model)
    chosen: dict[str, Any] = {"params_b": float(size.group(1))} if size else {"model": model}
    return {**chosen, "method": method.value, **settings}


@app.command("fit")
def fit_command(
    model: Annotated[str, typer.Argument(help="A model id (see /v1/models) or a size: `13b`.")],
    method: Annotated[FitMethod, typer.Option(help="Fine-tuning method.")],
    seq_len: Annotated[int, typer.Option(min=1, help="Sequence length (tokens).")] = 2048,
    micro_batch: Annotated[int, typer.Option(min=1, help="Micro-batch size per GPU.")] = 1,
    lora_rank: Annotated[int, typer.Option(min=1, help="LoRA rank.")] = 16,
    num_gpus: Annotated[int, typer.Option(min=1, help="GPUs, sharded (ZeRO-3/FSDP).")] = 1,
    api: ApiUrl = DEFAULT_API_URL,
    as_json: AsJson = False,
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
    answer = _ask(api, lambda client: client.estimate(body))
    if as_json:
        _print_json(answer)
        return
    out = Console()
    out.print(breakdown_table(answer))
    out.print(fits_table(answer))
    fitting = [g["gpu_name"] for g in answer["gpus"] if g["fits"]]
    out.print(f"fits on {len(fitting)} of {len(answer['gpus'])} GPU models")


def main() -> None:
    """Console-script entry point."""
    app()
