"""Event payloads as tests build them: one builder per payload that several services' tests
send, with the values most tests take, and every field settable by keyword.

The defaults are one buyer (``b1``), one seller (``s1``), one GPU model (``GPU``) on demand,
billed by the hour, priced in USD; ``fields`` set any other field of the payload or override
a default (pydantic validates the result, so a misspelt field fails the test).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from gpux_contracts import orders
from gpux_contracts.billing import CreditRequested
from gpux_contracts.capacity import InterruptionCause, LeaseInterruptionRequested
from gpux_contracts.ids import new_id
from gpux_contracts.money import Currency
from gpux_contracts.offers import (
    BillingGranularity,
    OfferStatus,
    OfferStatusChanged,
    OfferSubmitted,
    Tier,
)
from gpux_contracts.prices import BestAsk, BestAskChanged

GPU = "rtx-4090"
"""The GPU model every builder uses unless told otherwise."""

Price = str | Decimal | int
"""A price as tests write it (``"0.40"``); builders turn it into a Decimal."""


def order_placed(
    *,
    order_id: str | None = None,
    buyer_id: str = "b1",
    gpus: int = 1,
    price: Price | None = None,
    currency: Currency = Currency.USD,
    **fields: Any,
) -> orders.OrderPlaced:
    """An order for any tier as the gateway places it: with ``price``, a limit order good till
    cancelled; without, a market order, immediate or cancel. A new id unless given."""
    limit = price is not None
    values: dict[str, Any] = {
        "order_id": order_id or new_id(),
        "buyer_id": buyer_id,
        "gpu": GPU,
        "gpus": gpus,
        "type": orders.OrderType.LIMIT if limit else orders.OrderType.MARKET,
        "max_price_per_gpu_hour": None if price is None else Decimal(price),
        "currency": currency,
        "tier": orders.OrderTier.ANY,
        "time_in_force": orders.TimeInForce.GTC if limit else orders.TimeInForce.IOC,
    }
    return orders.OrderPlaced(**(values | fields))


def order_funded(
    placed: orders.OrderPlaced,
    *,
    held: Price,
    cap: Price | None = None,
    currency: Currency = Currency.EUR,
    **fields: Any,
) -> orders.OrderFunded:
    """Billing's word that it holds ``held`` for ``placed`` (hold ``h-<order id>``); with
    ``cap``, the order as billing funded it at that cap (a market order's, from the best ask)."""
    order = placed
    if cap is not None:
        order = placed.model_copy(update={"max_price_per_gpu_hour": Decimal(cap)})
    values: dict[str, Any] = {
        "order": order,
        "hold_id": f"h-{placed.order_id}",
        "held": Decimal(held),
        "held_currency": currency,
    }
    return orders.OrderFunded(**(values | fields))


def order_status(
    order_id: str,
    status: orders.OrderStatus,
    *,
    buyer_id: str = "b1",
    filled: int = 0,
    remaining: int = 0,
    **fields: Any,
) -> orders.OrderStatusChanged:
    """What the book says of an order: ``filled`` GPUs taken, ``remaining`` still wanted."""
    values: dict[str, Any] = {
        "order_id": order_id,
        "buyer_id": buyer_id,
        "gpu": GPU,
        "status": status,
        "filled_gpus": filled,
        "remaining_gpus": remaining,
    }
    return orders.OrderStatusChanged(**(values | fields))


def trade_executed(
    *,
    price: Price,
    executed_at: datetime,
    trade_id: str | None = None,
    gpus: int = 1,
    currency: Currency = Currency.USD,
    **fields: Any,
) -> orders.TradeExecuted:
    """A fill as matching publishes it, under a new trade id unless given; the order and the
    offer ids follow the trade's unless given."""
    trade = trade_id or new_id()
    values: dict[str, Any] = {
        "trade_id": trade,
        "order_id": f"order-{trade}",
        "offer_id": f"offer-{trade}",
        "buyer_id": "b1",
        "seller_id": "s1",
        "gpu": GPU,
        "tier": Tier.ON_DEMAND.value,
        "gpus": gpus,
        "price_per_gpu_hour": Decimal(price),
        "currency": currency,
        "billing": BillingGranularity.HOUR.value,
        "executed_at": executed_at,
    }
    return orders.TradeExecuted(**(values | fields))


def offer_submitted(
    offer_id: str,
    *,
    price: Price = "0.40",
    gpus: int = 4,
    currency: Currency = Currency.USD,
    **fields: Any,
) -> OfferSubmitted:
    """An offer as the gateway submits it, in every region unless ``region`` is given."""
    values: dict[str, Any] = {
        "offer_id": offer_id,
        "seller_id": "s1",
        "gpu": GPU,
        "gpus": gpus,
        "price_per_gpu_hour": Decimal(price),
        "currency": currency,
        "tier": Tier.ON_DEMAND,
        "billing": BillingGranularity.HOUR,
        "provisioning_timeout_seconds": 0,  # ready at the lease's start
    }
    return OfferSubmitted(**(values | fields))


def offer_status(
    offer_id: str, status: OfferStatus, remaining: int, **fields: Any
) -> OfferStatusChanged:
    """What the book (or pricing) says of an offer: its status and the GPUs it has left."""
    values: dict[str, Any] = {
        "offer_id": offer_id,
        "seller_id": "s1",
        "gpu": GPU,
        "status": status,
        "remaining_gpus": remaining,
    }
    return OfferStatusChanged(**(values | fields))


def interruption_requested(
    lease_id: str,
    *,
    noticed_at: datetime,
    notice: timedelta = timedelta(0),
    buyer_id: str = "b1",
    **fields: Any,
) -> LeaseInterruptionRequested:
    """The book's interruption of ``buyer_id``'s lease of 2 GPUs of s1's ``offer``, decided at
    ``noticed_at`` and ending ``notice`` later; a reclaim, taking the GPUs for no trade."""
    values: dict[str, Any] = {
        "lease_id": lease_id,
        "buyer_id": buyer_id,
        "offer_id": "offer",
        "seller_id": "s1",
        "gpu": GPU,
        "gpus": 2,
        "cause": InterruptionCause.RECLAIMED,
        "noticed_at": noticed_at,
        "interrupt_at": noticed_at + notice,
    }
    return LeaseInterruptionRequested(**(values | fields))


def best_ask_changed(
    prices: Mapping[Currency, Price] | None,
    as_of: datetime,
    *,
    tier: str = Tier.ON_DEMAND.value,
    offer_id: str = "offer-1",
    gpus: int = 1,
    **fields: Any,
) -> BestAskChanged:
    """Pricing's quote of the book of every region: ``gpus`` at the best ask, priced in the
    first of ``prices`` (and converted to the others), or nothing offered when ``prices`` is
    None; no depth."""
    best = None
    if prices is not None:
        converted = {currency: Decimal(price) for currency, price in prices.items()}
        currency, price = next(iter(converted.items()))
        best = BestAsk(
            offer_id=offer_id, price=price, currency=currency, prices=converted, gpus=gpus
        )
    values: dict[str, Any] = {
        "gpu": GPU,
        "tier": tier,
        "region": "*",
        "best": best,
        "depth": [],
        "as_of": as_of,
    }
    return BestAskChanged(**(values | fields))


def credit_requested(
    account_id: str,
    amount: Price,
    currency: Currency = Currency.USD,
    *,
    credit_id: str | None = None,
    **fields: Any,
) -> CreditRequested:
    """An admin's credit to ``account_id``'s wallet; its id names the account, the amount and
    the currency unless given (the same credit twice is one credit)."""
    values: dict[str, Any] = {
        "credit_id": credit_id or f"credit-{account_id}-{amount}-{currency.value}",
        "account_id": account_id,
        "amount": Decimal(amount),
        "currency": currency,
        "reference": "test",
        "requested_by": "admin",
    }
    return CreditRequested(**(values | fields))
