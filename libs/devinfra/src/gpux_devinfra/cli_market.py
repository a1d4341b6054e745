"""`gpux prices`, `book`, `offer push|list|update|withdraw`, `order buy|cancel`, `orders`,
`balance`, `topup`: the market through ``gpux_sdk``.

Amounts are typed as decimal strings (`0.40`) and sent as such, never through a float. Every
write sends an Idempotency-Key (``sdk_client.write_key``): a new one per order, offer, change
or top-up (an order's, an offer's or a top-up's: the caller's with ``--idempotency-key``, to
send again a run whose outcome it does not know); one derived from the id for cancelling an
order or withdrawing an offer, which are one act however often they are retried.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Annotated, Any

import typer

from gpux_contracts.offers import (
    DEFAULT_PROVISIONING_TIMEOUT_SECONDS,
    MAX_PROVISIONING_TIMEOUT_SECONDS,
    MIN_PROVISIONING_TIMEOUT_SECONDS,
    BillingGranularity,
    Tier,
)
from gpux_contracts.orders import OrderTier
from gpux_devinfra.amounts import money
from gpux_devinfra.cli_support import (
    Caller,
    Public,
    Writer,
    currency_code,
    grouped_options,
    print_json,
)
from gpux_devinfra.market_tables import (
    BookQuote,
    balances_table,
    book_table,
    offers_table,
    order_reason,
    orders_table,
    prices_table,
)
from gpux_devinfra.order_wait import DEFAULT_TIMEOUT_S, Progress, Waiter
from gpux_devinfra.price_watch import Board, watch
from gpux_devinfra.sdk_client import IDEMPOTENCY_KEY, call, pages, write_key
from gpux_sdk import AuthenticatedClient, Client
from gpux_sdk.api.market_data import get_orderbook, list_prices
from gpux_sdk.api.offers import list_offers, submit_offer, update_offer, withdraw_offer
from gpux_sdk.api.orders import cancel_order, list_orders, place_order
from gpux_sdk.api.wallets import create_topup, list_balances
from gpux_sdk.models.currency import Currency
from gpux_sdk.models.offer_change import OfferChange
from gpux_sdk.models.offer_in import OfferIn
from gpux_sdk.models.offer_out import OfferOut
from gpux_sdk.models.order_in import OrderIn
from gpux_sdk.models.order_out import OrderOut
from gpux_sdk.models.price_out import PriceOut
from gpux_sdk.models.provider import Provider
from gpux_sdk.models.tier import Tier as BookTier
from gpux_sdk.models.topup_accepted import TopupAccepted
from gpux_sdk.models.topup_in import TopupIn

INTERRUPTED = 130
"""The exit code of a wait stopped with Ctrl-C (128 + SIGINT, as shells report it)."""
_DECIMAL = re.compile(r"^\d{1,12}(?:\.\d{1,12})?$")


CurrencyOpt = Annotated[
    str, typer.Option(callback=currency_code, help="Currency code, e.g. USD or EUR.")
]
GpuOpt = Annotated[str, typer.Option(help="Catalog id of the GPU model, e.g. rtx-4090.")]


def _amount(value: str | None, name: str) -> str | None:
    """A decimal string as typed (`0.40`): checked, never turned into a float."""
    if value is None:
        return None
    if not _DECIMAL.match(value.strip()):
        raise typer.BadParameter(f"{value!r} is not a decimal amount such as 0.40", param_hint=name)
    return value.strip()


def keyed(client: AuthenticatedClient, key: str) -> AuthenticatedClient:
    """``client`` sending ``Idempotency-Key: key`` (for the writes whose SDK operation takes no
    key parameter: a PATCH or DELETE the gateway may later make once-only too)."""
    return client.with_headers({IDEMPOTENCY_KEY: key})


def prices_command(
    *,
    currency: CurrencyOpt = "USD",
    region: Annotated[str, typer.Option(help="A region, or * for every region.")] = "*",
    watch_: Annotated[
        bool,
        typer.Option("--watch", help="Follow the price stream, redrawing on each change (Ctrl-C)."),
    ] = False,
    public: Public,
) -> None:
    """Every book's best ask per GPU-hour (GET /v1/prices; --watch: GET /v1/stream/prices)."""
    wanted = Currency(currency)

    def read(client: Client) -> list[PriceOut]:
        return call(list_prices.sync_detailed, client, currency=wanted, region=region).items

    if not watch_:
        public.show(
            public.ask(read), lambda items: prices_table(map(BookQuote.of, items), currency)
        )
        return

    def follow(client: Client) -> None:
        watch(
            client,
            Board(currency, region),
            lambda: map(BookQuote.of, read(client)),
            as_json=public.as_json,
            note=lambda n: typer.echo(n, err=True),
        )

    try:
        public.ask(follow)
    except KeyboardInterrupt:
        return


def book_command(
    gpu: Annotated[str, typer.Argument(help="Catalog id of the GPU model, e.g. rtx-4090.")],
    *,
    tier: Annotated[Tier, typer.Option(help="The book's tier.")] = Tier.ON_DEMAND,
    currency: CurrencyOpt = "USD",
    public: Public,
) -> None:
    """One GPU model's order book, bids beside asks, best first (GET /v1/orderbook/GPU)."""
    query = {"tier": BookTier(tier.value), "currency": Currency(currency)}
    book = public.ask(lambda client: call(get_orderbook.sync_detailed, client, gpu=gpu, **query))
    public.show(book, book_table)


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


def offer_push(
    *,
    gpu: GpuOpt,
    gpus: Annotated[int, typer.Option(min=1, help="How many GPUs are offered.")],
    price: Annotated[str, typer.Option(help="Asking price per GPU-hour, e.g. 0.40.")],
    currency: CurrencyOpt,
    tier: Annotated[Tier, typer.Option(help="on_demand or interruptible.")],
    billing: Annotated[BillingGranularity, typer.Option(help="hour or second.")],
    terms: OfferTerms,
    caller: Writer,
) -> None:
    """Offer GPU-hours (POST /v1/offers); the offer starts `pending`."""
    body = OfferIn.from_dict(
        {
            "gpu": gpu,
            "gpus": gpus,
            "price_per_gpu_hour": _amount(price, "--price"),
            "currency": currency,
            "tier": tier.value,
            "billing": billing.value,
            **terms.fields(),
        }
    )
    caller.show(caller.send(submit_offer.sync_detailed, body), lambda o: offers_table([o]))


def offer_list(*, caller: Caller) -> None:
    """Your offers (GET /v1/offers)."""
    caller.show(
        caller.ask(lambda client: list(pages(list_offers.sync_detailed, client))), offers_table
    )


def _offer_line(what: str) -> Any:
    return lambda o: f"offer {o.id}: {what} (status {o.status})"


def offer_update(
    offer_id: Annotated[str, typer.Argument(metavar="ID", help="The offer's id.")],
    *,
    price: Annotated[
        str | None, typer.Option(help="A new price per GPU-hour (the offer's tier).")
    ] = None,
    interruptible_price: Annotated[
        str | None, typer.Option(help="A new interruptible price (an on-demand offer).")
    ] = None,
    gpus: Annotated[
        int | None,
        typer.Option(min=1, help="A new capacity (below what is leased: as leases end)."),
    ] = None,
    caller: Caller,
) -> None:
    """Change an offer's price or GPUs (PATCH /v1/offers/ID).

    Give any of --price, --interruptible-price and --gpus; the book takes the change shortly
    after (a refused change leaves the offer as it was, with the reason).
    """
    change: dict[str, Any] = {
        "price_per_gpu_hour": _amount(price, "--price"),
        "interruptible_price_per_gpu_hour": _amount(interruptible_price, "--interruptible-price"),
        "gpus": gpus,
    }
    given = {name: value for name, value in change.items() if value is not None}
    if not given:
        raise typer.BadParameter(
            "give --price, --interruptible-price or --gpus", param_hint="--price"
        )
    body = OfferChange.from_dict(given)
    offer: OfferOut = caller.ask(
        lambda client: call(
            update_offer.sync_detailed, keyed(client, write_key()), offer_id=offer_id, body=body
        )
    )
    caller.show(offer, _offer_line("change requested"))


def offer_withdraw(
    offer_id: Annotated[str, typer.Argument(metavar="ID", help="The offer's id.")],
    *,
    caller: Caller,
) -> None:
    """Withdraw an offer (DELETE /v1/offers/ID); the book confirms with `withdrawn`."""
    key = write_key("withdraw", offer_id)
    offer = caller.ask(
        lambda client: call(withdraw_offer.sync_detailed, keyed(client, key), offer_id=offer_id)
    )
    caller.show(offer, _offer_line("withdrawal requested"))


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


@dataclasses.dataclass(frozen=True)
class Waiting:
    """`--wait [--timeout SECONDS]`: follow the order until it is final."""

    wait: Annotated[
        bool,
        typer.Option(
            "--wait",
            help="Show the order's progress until it is final: exit 0 once filled, 1 if it"
            " ends otherwise or --timeout passes.",
        ),
    ] = False
    timeout: Annotated[
        int, typer.Option(min=1, metavar="SECONDS", help="How long --wait waits.")
    ] = DEFAULT_TIMEOUT_S


@dataclasses.dataclass(frozen=True)
class OrderTerms:
    """Which offers an order takes, for how long, and whether it buys again."""

    tier: Annotated[OrderTier, typer.Option(help="on_demand, interruptible or any.")] = (
        OrderTier.ANY
    )
    hours: Annotated[int | None, typer.Option(min=1, help="Rental length in hours.")] = None
    rebuy: Annotated[
        bool, typer.Option("--rebuy", help="Buy again when an interruptible lease is interrupted.")
    ] = False
    min_reliability: Annotated[
        str | None,
        typer.Option(
            metavar="RATE",
            help="Only sellers who delivered at least this share of their counted leases"
            " (0 to 1, e.g. 0.95); sellers with none counted do not qualify.",
        ),
    ] = None

    def fields(self) -> dict[str, Any]:
        """The order's ``tier``, and its ``hours``, re-buy and minimum reliability when given
        (the minimum as typed: the gateway checks it, 0 to 1 with at most four places)."""
        chosen: dict[str, Any] = {"tier": self.tier.value}
        if self.hours is not None:
            chosen["hours"] = self.hours
        if self.rebuy:
            chosen["rebuy_on_interruption"] = True
        if self.min_reliability is not None:
            chosen["min_reliability"] = _amount(self.min_reliability, "--min-reliability")
        return chosen


def order_buy(
    *,
    gpu: GpuOpt,
    gpus: Annotated[int, typer.Option(min=1, help="How many GPUs to rent.")],
    currency: CurrencyOpt,
    price: OrderPrice,
    terms: OrderTerms,
    waiting: Waiting,
    caller: Writer,
) -> None:
    """Order GPU-hours (POST /v1/orders): `--market [--cap PRICE]` or `--limit PRICE`.

    With --wait, the order's progress (funded, open, each fill and its lease) is shown from
    the account's event stream until the order is final: exit 0 once filled, 1 if it ends
    otherwise (the reason is printed) or --timeout passes.
    """
    chosen = {"gpu": gpu, "gpus": gpus, "currency": currency, **price.fields()}
    body = OrderIn.from_dict({**chosen, **terms.fields()})
    if not waiting.wait:
        order = caller.send(place_order.sync_detailed, body)
        caller.show(order, lambda o: f"order {o.id}: {order_reason(o)}")
        return
    key = caller.write_key()
    caller.ask(lambda client: _buy_and_wait(client, caller, body, key, waiting.timeout))


def _buy_and_wait(
    client: AuthenticatedClient, caller: Caller, body: OrderIn, key: str, timeout_s: int
) -> None:
    """Place the order, then follow it (progress on stderr with --json, the final order as
    JSON on stdout); exit 1 unless it ends filled."""
    order: OrderOut = call(place_order.sync_detailed, client, body=body, idempotency_key=key)

    def say(line: str) -> None:
        typer.echo(line, err=caller.as_json)  # --json keeps stdout to the final order

    progress = Progress.of(order)
    say(progress.line())
    waiter = Waiter(client, progress, say, timeout_s=timeout_s)
    try:
        ended = waiter.run()
    except KeyboardInterrupt:
        typer.echo(f"gpux: stopped waiting; {_still(order.id, progress)}", err=True)
        raise typer.Exit(INTERRUPTED) from None
    if not ended:
        typer.echo(f"gpux: after {timeout_s} s, {_still(order.id, progress)}", err=True)
        raise typer.Exit(1)
    final = waiter.last
    if caller.as_json:
        print_json(final if final is not None else order)
    if progress.status != "filled":
        why = progress.text  # the reading's reason when it read final: the view has it all
        if final is not None and str(final.status) == progress.status:
            why = order_reason(final)
        typer.echo(f"gpux: order {order.id} {why}", err=True)
        raise typer.Exit(1)


def _still(order_id: str, progress: Progress) -> str:
    """`order 01… is still open (gpux order cancel 01… ends it)`."""
    return f"order {order_id} is still {progress.text} (`gpux order cancel {order_id}` ends it)"


def order_cancel(
    order_id: Annotated[str, typer.Argument(metavar="ID", help="The order's id.")],
    *,
    caller: Caller,
) -> None:
    """Cancel what is still open of an order (DELETE /v1/orders/ID).

    The book confirms with `cancelled`; what was filled stays leased.
    """
    key = write_key("cancel", order_id)
    order = caller.ask(
        lambda client: call(cancel_order.sync_detailed, keyed(client, key), order_id=order_id)
    )
    caller.show(order, lambda o: f"order {o.id}: cancellation requested ({order_reason(o)})")


def orders_command(*, caller: Caller) -> None:
    """Your orders (GET /v1/orders)."""
    caller.show(
        caller.ask(lambda client: list(pages(list_orders.sync_detailed, client))), orders_table
    )


def balance_command(*, caller: Caller) -> None:
    """Your wallet: available and held per currency (GET /v1/accounts/me/balances)."""
    balances = caller.ask(lambda client: call(list_balances.sync_detailed, client).items)
    caller.show(balances, balances_table)


def _topup_line(answer: TopupAccepted) -> str:
    amount = money(answer.amount, str(answer.currency))
    return f"top-up {answer.topup_id}: {amount} {answer.status} ({answer.provider})"


def topup_command(
    amount: Annotated[str, typer.Argument(help="Amount, e.g. 100.00.")],
    currency: Annotated[
        str, typer.Argument(callback=currency_code, help="Currency code, e.g. EUR.")
    ],
    *,
    provider: Annotated[Provider, typer.Option(help="manual or dev.")] = Provider.MANUAL,
    caller: Writer,
) -> None:
    """Ask for a top-up of your wallet (POST /v1/topups)."""
    body = TopupIn(
        amount=str(_amount(amount, "AMOUNT")), currency=Currency(currency), provider=provider
    )
    caller.show(caller.send(create_topup.sync_detailed, body), _topup_line)


def register(app: typer.Typer) -> None:
    """Add these commands to the `gpux` app."""
    offer_app = typer.Typer(
        help="Sell GPU-hours: push, list, update and withdraw offers.", no_args_is_help=True
    )
    order_app = typer.Typer(help="Buy GPU-hours: place and cancel orders.", no_args_is_help=True)
    app.add_typer(offer_app, name="offer")
    app.add_typer(order_app, name="order")
    app.command("prices")(grouped_options(prices_command))
    app.command("book")(grouped_options(book_command))
    app.command("orders")(grouped_options(orders_command))
    app.command("balance")(grouped_options(balance_command))
    app.command("topup")(grouped_options(topup_command))
    offer_app.command("push")(grouped_options(offer_push))
    offer_app.command("list")(grouped_options(offer_list))
    offer_app.command("update")(grouped_options(offer_update))
    offer_app.command("withdraw")(grouped_options(offer_withdraw))
    order_app.command("buy")(grouped_options(order_buy))
    order_app.command("cancel")(grouped_options(order_cancel))
