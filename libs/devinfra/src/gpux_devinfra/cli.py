"""The ``gpux`` command: local infrastructure, and the market as the gateway serves it."""

from __future__ import annotations

import dataclasses
import re
import time
from enum import StrEnum
from typing import Annotated, Any

import typer
from rich.console import Group
from rich.live import Live
from rich.table import Table

from gpux_contracts.offers import (
    DEFAULT_PROVISIONING_TIMEOUT_SECONDS,
    MAX_PROVISIONING_TIMEOUT_SECONDS,
    MIN_PROVISIONING_TIMEOUT_SECONDS,
    BillingGranularity,
    Tier,
)
from gpux_contracts.orders import OrderTier
from gpux_devinfra import cli_demo, cli_events, cli_leases, cli_payouts, infra
from gpux_devinfra.api_client import DEFAULT_API_URL
from gpux_devinfra.catalog_tables import breakdown_table, fits_table, gpu_table
from gpux_devinfra.cli_support import ApiUrl, AsJson, Caller, ask, grouped_options, show
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
def gpus_command(*, api: ApiUrl = DEFAULT_API_URL, as_json: AsJson = False) -> None:
    """GPU models: memory, bandwidth, the largest base model for QLoRA / LoRA, best price."""
    show(ask(api, lambda client: client.gpus()), as_json, gpu_table)


def estimate_body(model: str, method: FitMethod, **settings: Any) -> dict[str, Any]:
    """The estimate request: a catalog model id, or a bare size such as `13b`."""
    size = _SIZE.match(model)
    chosen: dict[str, Any] = {"params_b": float(size.group(1))} if size else {"model": model}
    return {**chosen, "method": method.value, **settings}


def _fit_report(answer: dict[str, Any]) -> Group:
    fitting = [g["gpu_name"] for g in answer["gpus"] if g["fits"]]
    return Group(
        breakdown_table(answer),
        fits_table(answer),
        f"fits on {len(fitting)} of {len(answer['gpus'])} GPU models",
    )


@app.command("fit")
def fit_command(
    model: Annotated[str, typer.Argument(help="A model id (see /v1/models) or a size: `13b`.")],
    *,
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
    show(ask(api, lambda client: client.estimate(body)), as_json, _fit_report)


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


def _provisioning_timeout(seconds: int) -> int:
    """An offer's provisioning timeout as the API takes it: 0 (ready at the lease's start) or
    within the contract's bounds."""
    if seconds and not (
        MIN_PROVISIONING_TIMEOUT_SECONDS <= seconds <= MAX_PROVISIONING_TIMEOUT_SECONDS
    ):
        raise typer.BadParameter(
            f"0 (ready at the start) or {MIN_PROVISIONING_TIMEOUT_SECONDS} to"
            f" {MAX_PROVISIONING_TIMEOUT_SECONDS} seconds",
            param_hint="--provisioning-timeout",
        )
    return seconds


@app.command("prices")
def prices_command(
    *,
    currency: CurrencyOpt = "USD",
    watch: Annotated[
        bool, typer.Option("--watch", help="Re-render every 2 s (Ctrl-C stops).")
    ] = False,
    api: ApiUrl = DEFAULT_API_URL,
    as_json: AsJson = False,
) -> None:
    """Every book's best ask per GPU-hour (GET /v1/prices)."""
    wanted = _currency(currency)
    items = ask(api, lambda client: client.prices(wanted))
    if not watch:
        show(items, as_json, lambda found: prices_table(found, wanted))
        return
    try:
        with Live(prices_table(items, wanted), refresh_per_second=4) as live:
            while True:
                time.sleep(2)
                items = ask(api, lambda client: client.prices(wanted))
                live.update(prices_table(items, wanted))
    except KeyboardInterrupt:
        return


@dataclasses.dataclass(frozen=True)
class OfferTerms:
    """An offer's optional terms: an on-demand offer's second price (`--interruptible-price
    PRICE [--notice SECONDS]`) and how long its seller has to post a lease's access
    (`--provisioning-timeout SECONDS`, the API's default unless given)."""

    interruptible_price: Annotated[
        str | None,
        typer.Option(help="With --tier on_demand: also sell the GPUs interruptible at this price."),
    ] = None
    notice: Annotated[
        int | None,
        typer.Option(min=120, max=86_400, help="Seconds of notice before an interruption."),
    ] = None
    provisioning_timeout: Annotated[
        int,
        typer.Option(
            "--provisioning-timeout",
            metavar="SECONDS",
            callback=_provisioning_timeout,
            help="Seconds after a lease starts to post its access before it fails; 0: the"
            " machines are ready at the start (charged from then).",
        ),
    ] = DEFAULT_PROVISIONING_TIMEOUT_SECONDS

    def fields(self) -> dict[str, Any]:
        """The offer's provisioning timeout, and its interruptible price and notice if given."""
        chosen: dict[str, Any] = {"provisioning_timeout_seconds": self.provisioning_timeout}
        if self.interruptible_price is not None:
            price = _amount(self.interruptible_price, "--interruptible-price")
            chosen["interruptible_price_per_gpu_hour"] = price
        if self.notice is not None:
            chosen["interruption_notice_seconds"] = self.notice
        return chosen


@offer_app.command("push")
@grouped_options
def offer_push(
    *,
    gpu: Annotated[str, typer.Option(help="Catalog id of the GPU model, e.g. rtx-4090.")],
    gpus: Annotated[int, typer.Option(min=1, help="How many GPUs are offered.")],
    price: Annotated[str, typer.Option(help="Asking price per GPU-hour, e.g. 0.40.")],
    currency: CurrencyOpt,
    tier: Annotated[Tier, typer.Option(help="on_demand or interruptible.")],
    billing: Annotated[BillingGranularity, typer.Option(help="hour or second.")],
    terms: OfferTerms,
    caller: Caller,
) -> None:
    """Offer GPU-hours (POST /v1/offers); the offer starts `pending`."""
    body: dict[str, Any] = {
        "gpu": gpu,
        "gpus": gpus,
        "price_per_gpu_hour": _amount(price, "--price"),
        "currency": _currency(currency),
        "tier": tier.value,
        "billing": billing.value,
    }
    body.update(terms.fields())
    caller.show(caller.ask(lambda client: client.push_offer(body)), lambda o: offers_table([o]))


@offer_app.command("list")
@grouped_options
def offer_list(*, caller: Caller) -> None:
    """Your offers (GET /v1/offers)."""
    caller.show(caller.ask(lambda client: client.offers()), offers_table)


@offer_app.command("withdraw")
@grouped_options
def offer_withdraw(
    offer_id: Annotated[str, typer.Argument(metavar="ID", help="The offer's id.")],
    *,
    caller: Caller,
) -> None:
    """Withdraw an offer (DELETE /v1/offers/ID); the book confirms with `withdrawn`."""
    offer = caller.ask(lambda client: client.withdraw_offer(offer_id))
    caller.show(offer, lambda o: f"offer {o['id']}: withdrawal requested (status {o['status']})")


@dataclasses.dataclass(frozen=True)
class OrderPrice:
    """How an order is priced: `--market [--cap PRICE]` or `--limit PRICE`."""

    market: Annotated[bool, typer.Option("--market", help="Take the best offers now.")] = False
    cap: Annotated[
        str | None, typer.Option(help="A market order's highest price per GPU-hour.")
    ] = None
    limit: Annotated[
        str | None, typer.Option(help="A limit order's price per GPU-hour (may rest).")
    ] = None

    def fields(self) -> dict[str, str]:
        """The order's ``type`` and, if any, its ``max_price_per_gpu_hour``; a usage error
        unless exactly one of ``--market`` or ``--limit`` is given."""
        if self.market == (self.limit is not None):
            raise typer.BadParameter("give either --market or --limit PRICE", param_hint="--market")
        if self.cap is not None and not self.market:
            raise typer.BadParameter("--cap is for a --market order", param_hint="--cap")
        chosen: dict[str, str] = {"type": "market" if self.market else "limit"}
        price = _amount(self.cap, "--cap") if self.market else _amount(self.limit, "--limit")
        if price is not None:
            chosen["max_price_per_gpu_hour"] = price
        return chosen


@order_app.command("buy")
@grouped_options
def order_buy(
    *,
    gpu: Annotated[str, typer.Option(help="Catalog id of the GPU model, e.g. rtx-4090.")],
    gpus: Annotated[int, typer.Option(min=1, help="How many GPUs to rent.")],
    currency: CurrencyOpt,
    price: OrderPrice,
    tier: Annotated[OrderTier, typer.Option(help="on_demand, interruptible or any.")] = (
        OrderTier.ANY
    ),
    hours: Annotated[int | None, typer.Option(min=1, help="Rental length in hours.")] = None,
    rebuy: Annotated[
        bool, typer.Option("--rebuy", help="Buy again when an interruptible lease is interrupted.")
    ] = False,
    caller: Caller,
) -> None:
    """Order GPU-hours (POST /v1/orders): `--market [--cap PRICE]` or `--limit PRICE`."""
    priced = price.fields()
    body: dict[str, Any] = {
        "gpu": gpu,
        "gpus": gpus,
        "type": priced.pop("type"),
        "currency": _currency(currency),
        "tier": tier.value,
        **priced,
    }
    if hours is not None:
        body["hours"] = hours
    if rebuy:
        body["rebuy_on_interruption"] = True
    order = caller.ask(lambda client: client.place_order(body))
    caller.show(order, lambda o: f"order {o['id']}: {order_reason(o)}")


@app.command("orders")
@grouped_options
def orders_command(*, caller: Caller) -> None:
    """Your orders (GET /v1/orders)."""
    caller.show(caller.ask(lambda client: client.orders()), orders_table)


@app.command("balance")
@grouped_options
def balance_command(*, caller: Caller) -> None:
    """Your wallet: available and held per currency (GET /v1/accounts/me/balances)."""
    caller.show(caller.ask(lambda client: client.balances()), balances_table)


class TopupProvider(StrEnum):
    """How a top-up is paid."""

    MANUAL = "manual"
    DEV = "dev"


def _topup_line(answer: dict[str, Any]) -> str:
    return (
        f"top-up {answer['topup_id']}: {answer['amount']} {answer['currency']}"
        f" {answer['status']} ({answer['provider']})"
    )


@app.command("topup")
@grouped_options
def topup_command(
    amount: Annotated[str, typer.Argument(help="Amount, e.g. 100.00.")],
    currency: Annotated[str, typer.Argument(help="Currency code, e.g. EUR.")],
    *,
    provider: Annotated[TopupProvider, typer.Option(help="manual or dev.")] = (
        TopupProvider.MANUAL
    ),
    caller: Caller,
) -> None:
    """Ask for a top-up of your wallet (POST /v1/topups)."""
    body = {
        "amount": _amount(amount, "AMOUNT"),
        "currency": _currency(currency),
        "provider": provider.value,
    }
    caller.show(caller.ask(lambda client: client.topup(body)), _topup_line)


cli_leases.register(app)
cli_payouts.register(app)
cli_events.register(app)
cli_demo.register(app)


def main() -> None:
    """Console-script entry point."""
    app()
