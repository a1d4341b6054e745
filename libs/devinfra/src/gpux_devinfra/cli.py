"""The ``gpux`` command: local infrastructure, and the market as the gateway serves it."""

from __future__ import annotations

import re
import time
from enum import StrEnum
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.live import Live
from rich.table import Table

from gpux_contracts.offers import BillingGranularity, Tier
from gpux_contracts.orders import OrderTier
from gpux_devinfra import cli_demo, cli_leases, infra
from gpux_devinfra.api_client import DEFAULT_API_URL
from gpux_devinfra.catalog_tables import breakdown_table, fits_table, gpu_table
from gpux_devinfra.cli_support import ApiKey, ApiUrl, AsJson
from gpux_devinfra.cli_support import ask as _ask
from gpux_devinfra.cli_support import need_key as _need_key
from gpux_devinfra.cli_support import print_json as _print_json
from gpux_devinfra.market_tables import (
    balances_table,
    offers_table,
    order_reason,
    orders_table,
    prices_table,
)
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


_SIZE = re.compile(r"^(\d+(?:\.\d+)?)\s*[bB]?$")


class FitMethod(StrEnum):
    """Fine-tuning method, as the estimator names it."""

    QLORA = "qlora"
    LORA = "lora"
    FULL = "full"


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


CurrencyOpt = Annotated[str, typer.Option(help="Currency code, e.g. USD or EUR.")]
_DECIMAL = re.compile(r"^\d{1,12}(?:\.\d{1,12})?$")

offer_app = typer.Typer(
    help="Sell GPU-hours: push, list and withdraw offers.", no_args_is_help=True
)
order_app = typer.Typer(help="Buy GPU-hours.", no_args_is_help=True)
app.add_typer(offer_app, name="offer")
app.add_typer(order_app, name="order")


def _amount(value: str | None, name: str) -> str | None:
    """A decimal string as typed (`0.40`): checked, never turned into a float."""
    if value is None:
        return None
    if not _DECIMAL.match(value.strip()):
        raise typer.BadParameter(f"{value!r} is not a decimal amount such as 0.40", param_hint=name)
    return value.strip()


def _currency(value: str) -> str:
    return value.strip().upper()


@app.command("prices")
def prices_command(
    currency: CurrencyOpt = "USD",
    watch: Annotated[
        bool, typer.Option("--watch", help="Re-render every 2 s (Ctrl-C stops).")
    ] = False,
    api: ApiUrl = DEFAULT_API_URL,
    as_json: AsJson = False,
) -> None:
    """Every book's best ask per GPU-hour (GET /v1/prices)."""
    wanted = _currency(currency)
    items = _ask(api, lambda client: client.prices(wanted))
    if as_json and not watch:
        _print_json(items)
        return
    if not watch:
        Console().print(prices_table(items, wanted))
        return
    try:
        with Live(prices_table(items, wanted), refresh_per_second=4) as live:
            while True:
                time.sleep(2)
                items = _ask(api, lambda client: client.prices(wanted))
                live.update(prices_table(items, wanted))
    except KeyboardInterrupt:
        return


@offer_app.command("push")
def offer_push(
    gpu: Annotated[str, typer.Option(help="Catalog id of the GPU model, e.g. rtx-4090.")],
    gpus: Annotated[int, typer.Option(min=1, help="How many GPUs are offered.")],
    price: Annotated[str, typer.Option(help="Asking price per GPU-hour, e.g. 0.40.")],
    currency: CurrencyOpt,
    tier: Annotated[Tier, typer.Option(help="on_demand or interruptible.")],
    billing: Annotated[BillingGranularity, typer.Option(help="hour or second.")],
    key: ApiKey = None,
    api: ApiUrl = DEFAULT_API_URL,
    as_json: AsJson = False,
) -> None:
    """Offer GPU-hours (POST /v1/offers); the offer starts `pending`."""
    body = {
        "gpu": gpu,
        "gpus": gpus,
        "price_per_gpu_hour": _amount(price, "--price"),
        "currency": _currency(currency),
        "tier": tier.value,
        "billing": billing.value,
    }
    offer = _ask(api, lambda client: client.push_offer(body), _need_key(key))
    if as_json:
        _print_json(offer)
        return
    Console().print(offers_table([offer]))


@offer_app.command("list")
def offer_list(key: ApiKey = None, api: ApiUrl = DEFAULT_API_URL, as_json: AsJson = False) -> None:
    """Your offers (GET /v1/offers)."""
    offers = _ask(api, lambda client: client.offers(), _need_key(key))
    if as_json:
        _print_json(offers)
        return
    Console().print(offers_table(offers))


@offer_app.command("withdraw")
def offer_withdraw(
    offer_id: Annotated[str, typer.Argument(metavar="ID", help="The offer's id.")],
    key: ApiKey = None,
    api: ApiUrl = DEFAULT_API_URL,
    as_json: AsJson = False,
) -> None:
    """Withdraw an offer (DELETE /v1/offers/ID); the book confirms with `withdrawn`."""
    offer = _ask(api, lambda client: client.withdraw_offer(offer_id), _need_key(key))
    if as_json:
        _print_json(offer)
        return
    print(f"offer {offer['id']}: withdrawal requested (status {offer['status']})")


@order_app.command("buy")
def order_buy(
    gpu: Annotated[str, typer.Option(help="Catalog id of the GPU model, e.g. rtx-4090.")],
    gpus: Annotated[int, typer.Option(min=1, help="How many GPUs to rent.")],
    currency: CurrencyOpt,
    market: Annotated[bool, typer.Option("--market", help="Take the best offers now.")] = False,
    cap: Annotated[
        str | None, typer.Option(help="A market order's highest price per GPU-hour.")
    ] = None,
    limit: Annotated[
        str | None, typer.Option(help="A limit order's price per GPU-hour (may rest).")
    ] = None,
    tier: Annotated[OrderTier, typer.Option(help="on_demand, interruptible or any.")] = (
        OrderTier.ANY
    ),
    hours: Annotated[int | None, typer.Option(min=1, help="Rental length in hours.")] = None,
    key: ApiKey = None,
    api: ApiUrl = DEFAULT_API_URL,
    as_json: AsJson = False,
) -> None:
    """Order GPU-hours (POST /v1/orders): `--market [--cap PRICE]` or `--limit PRICE`."""
    if market == (limit is not None):
        raise typer.BadParameter("give either --market or --limit PRICE", param_hint="--market")
    if cap is not None and not market:
        raise typer.BadParameter("--cap is for a --market order", param_hint="--cap")
    body: dict[str, Any] = {
        "gpu": gpu,
        "gpus": gpus,
        "type": "market" if market else "limit",
        "currency": _currency(currency),
        "tier": tier.value,
    }
    price = _amount(cap, "--cap") if market else _amount(limit, "--limit")
    if price is not None:
        body["max_price_per_gpu_hour"] = price
    if hours is not None:
        body["hours"] = hours
    order = _ask(api, lambda client: client.place_order(body), _need_key(key))
    if as_json:
        _print_json(order)
        return
    print(f"order {order['id']}: {order_reason(order)}")


@app.command("orders")
def orders_command(
    key: ApiKey = None, api: ApiUrl = DEFAULT_API_URL, as_json: AsJson = False
) -> None:
    """Your orders (GET /v1/orders)."""
    orders = _ask(api, lambda client: client.orders(), _need_key(key))
    if as_json:
        _print_json(orders)
        return
    Console().print(orders_table(orders))


@app.command("balance")
def balance_command(
    key: ApiKey = None, api: ApiUrl = DEFAULT_API_URL, as_json: AsJson = False
) -> None:
    """Your wallet: available and held per currency (GET /v1/accounts/me/balances)."""
    balances = _ask(api, lambda client: client.balances(), _need_key(key))
    if as_json:
        _print_json(balances)
        return
    Console().print(balances_table(balances))


class TopupProvider(StrEnum):
    """How a top-up is paid."""

    MANUAL = "manual"
    DEV = "dev"


@app.command("topup")
def topup_command(
    amount: Annotated[str, typer.Argument(help="Amount, e.g. 100.00.")],
    currency: Annotated[str, typer.Argument(help="Currency code, e.g. EUR.")],
    provider: Annotated[TopupProvider, typer.Option(help="manual or dev.")] = (
        TopupProvider.MANUAL
    ),
    key: ApiKey = None,
    api: ApiUrl = DEFAULT_API_URL,
    as_json: AsJson = False,
) -> None:
    """Ask for a top-up of your wallet (POST /v1/topups)."""
    body = {
        "amount": _amount(amount, "AMOUNT"),
        "currency": _currency(currency),
        "provider": provider.value,
    }
    answer = _ask(api, lambda client: client.topup(body), _need_key(key))
    if as_json:
        _print_json(answer)
        return
    print(
        f"top-up {answer['topup_id']}: {answer['amount']} {answer['currency']}"
        f" {answer['status']} ({answer['provider']})"
    )


cli_leases.register(app)
cli_demo.register(app)


def main() -> None:
    """Console-script entry point."""
    app()
