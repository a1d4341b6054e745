"""What the matching service's integration tests feed it and read back.

Offers arrive as pricing accepts them (``pricing.offers``), funded orders and cancels as
billing sends them (``orders.book``); the book's reports are read from Kafka until they show
what a test waits for. Every offer is seller-1's, on demand, by the hour, in EUR; every order
buyer-1's, for any tier, 2 hours, good till cancelled, in EUR (``fields`` override any of it).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from decimal import Decimal
from typing import Any

from gpux_contracts.ids import new_id
from gpux_contracts.money import Currency
from gpux_contracts.offers import OfferAccepted, OfferSubmitted
from gpux_contracts.orders import (
    OrderCancelRequested,
    OrderFunded,
    OrderPlaced,
    OrderStatusChanged,
    OrderType,
    TimeInForce,
    TradeExecuted,
)
from gpux_contracts.topics import (
    MARKET_TRADES,
    OFFERS_STATUS,
    ORDERS_BOOK,
    ORDERS_STATUS,
    PRICING_OFFERS,
    Topic,
)
from gpux_devinfra.testing.kafka import publish_payloads, read_to_end
from gpux_devinfra.testing.payloads import Price, offer_submitted, order_placed
from gpux_devinfra.testing.waiting import eventually
from gpux_platform.settings import GpuxSettings

EUR = Currency.EUR

RUN: dict[str, Any] = {"snapshot_every": 5, "expiry_interval_s": 0.2}
"""How the tests run the service: snapshots often, expiry checked five times a second."""


def offer(gpu: str, price: Price, gpus: int, **fields: Any) -> OfferSubmitted:
    """A new offer of ``gpus`` GPUs of ``gpu`` at ``price`` EUR an hour."""
    values: dict[str, Any] = {"seller_id": "seller-1", "currency": EUR} | fields
    return offer_submitted(new_id(), gpu=gpu, price=price, gpus=gpus, **values)


def order(
    gpu: str, gpus: int, kind: OrderType, price: Price | None = None, **fields: Any
) -> OrderPlaced:
    """A new order of ``kind`` for ``gpus`` GPUs of ``gpu``, limited (or capped) at ``price``."""
    values: dict[str, Any] = {
        "buyer_id": "buyer-1",
        "currency": EUR,
        "type": kind,
        "hours": 2,
        "time_in_force": TimeInForce.GTC,
    }
    return order_placed(gpu=gpu, gpus=gpus, price=price, **(values | fields))


async def accept(settings: GpuxSettings, *offers: OfferSubmitted, revision: int = 1) -> None:
    """Publish each offer as pricing accepted it, at ``revision``."""
    items = [(o.gpu, OfferAccepted(offer=o, revision=revision)) for o in offers]
    await publish_payloads(settings, PRICING_OFFERS, "pricing", items)


def funded(placed: OrderPlaced, held: Decimal = Decimal("100")) -> OrderFunded:
    """Billing's word that it holds ``held`` EUR for the order."""
    return OrderFunded(order=placed, hold_id=new_id(), held=held, held_currency=EUR)


async def fund(settings: GpuxSettings, *orders: OrderPlaced) -> None:
    """Publish each order as billing funded it."""
    items = [(o.gpu, funded(o)) for o in orders]
    await publish_payloads(settings, ORDERS_BOOK, "billing", items)


async def cancel(settings: GpuxSettings, placed: OrderPlaced) -> None:
    """Publish the buyer's cancel of the order's rest, as billing forwards it."""
    request = OrderCancelRequested(
        order_id=placed.order_id, buyer_id=placed.buyer_id, gpu=placed.gpu
    )
    await publish_payloads(settings, ORDERS_BOOK, "billing", [(placed.gpu, request)])


async def reported(
    settings: GpuxSettings,
    topic: Topic,
    check: Callable[[list[Any]], object],
    timeout_s: float = 20,
) -> list[Any]:
    """Every payload matching published on ``topic``, once ``check`` holds for them."""
    return await eventually(
        lambda: read_to_end(settings, topic, topic.codec(), "matching"),
        check,
        what=f"matching's records on {topic.name}",
        timeout_s=timeout_s,
        interval_s=0.3,
    )


Status = tuple[str, str, int, int, str | None]


def order_states(seen: list[OrderStatusChanged]) -> list[Status]:
    """(order id, status, filled, remaining, reason) of each report."""
    return [(s.order_id, s.status.value, s.filled_gpus, s.remaining_gpus, s.reason) for s in seen]


async def live(settings: GpuxSettings, *offers: OfferSubmitted) -> None:
    """Wait until the book reported every offer live (orders and offers are separate topics)."""
    wanted = {(o.offer_id, "live", o.gpus) for o in offers}
    seen = await reported(
        settings,
        OFFERS_STATUS,
        lambda s: wanted <= {(x.offer_id, x.status.value, x.remaining_gpus) for x in s},
    )
    assert wanted <= {(x.offer_id, x.status.value, x.remaining_gpus) for x in seen}


async def fund_once_live(
    settings: GpuxSettings, offers: Sequence[OfferSubmitted], *orders: OrderPlaced
) -> None:
    """Publish the offers, wait until the book reported each live, then fund the orders."""
    await accept(settings, *offers)
    await live(settings, *offers)
    await fund(settings, *orders)


async def orders_until(settings: GpuxSettings, expected: Status) -> list[Status]:
    """Every order report (``order_states``), once ``expected`` is among them."""
    seen = await reported(settings, ORDERS_STATUS, lambda s: expected in order_states(s))
    return order_states(seen)


async def trades_of(settings: GpuxSettings, order_id: str) -> list[TradeExecuted]:
    """The order's trades published so far."""
    return [
        t
        for t in await read_to_end(settings, MARKET_TRADES, MARKET_TRADES.codec(), "matching")
        if t.order_id == order_id
    ]
