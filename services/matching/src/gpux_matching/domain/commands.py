"""Commands as data, so a stream can be stored, replayed (recovery) and generated (tests).

``apply`` feeds one to an engine; it is the same as calling the method of the same name.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

from gpux_matching.domain.engine import MatchingEngine
from gpux_matching.domain.levels import changed_books
from gpux_matching.domain.results import Result
from gpux_matching.domain.types import OrderType, Tier, TimeInForce
from gpux_matching.domain.units import Instant


class AddOffer(NamedTuple):
    """A seller's offer arrives (``MatchingEngine.add_offer``)."""

    now: Instant
    offer_id: str
    seller_id: str
    gpu: str
    tier: str
    price_micros: int
    currency: str
    gpus: int
    billing: str = "hour"
    region: str | None = None
    min_hours: int | None = None
    available_until: Instant | None = None


class ChangeOffer(NamedTuple):
    """A seller re-prices an offer or sets its GPU count (``MatchingEngine.change_offer``)."""

    now: Instant
    offer_id: str
    price_micros: int | None = None
    gpus: int | None = None


class WithdrawOffer(NamedTuple):
    """A seller withdraws an offer (``MatchingEngine.withdraw_offer``)."""

    now: Instant
    offer_id: str


class PlaceOrder(NamedTuple):
    """A funded order arrives (``MatchingEngine.place_order``)."""

    now: Instant
    order_id: str
    buyer_id: str
    gpu: str
    gpus: int
    currency: str
    order_type: str = OrderType.LIMIT
    price_micros: int | None = None
    tier: str = Tier.ANY
    region: str | None = None
    hours: int | None = None
    time_in_force: str = TimeInForce.GTC
    expires_at: Instant | None = None


class CancelOrder(NamedTuple):
    """A buyer cancels an order's remainder (``MatchingEngine.cancel_order``)."""

    now: Instant
    order_id: str


class Expire(NamedTuple):
    """Time passes (``MatchingEngine.expire``)."""

    now: Instant


class SetFx(NamedTuple):
    """New FX rates (``MatchingEngine.set_fx``)."""

    now: Instant
    rates: Mapping[str, object]


Command = AddOffer | ChangeOffer | WithdrawOffer | PlaceOrder | CancelOrder | Expire | SetFx
"""Anything an engine can be told."""


def apply(engine: MatchingEngine, command: Command) -> Result:
    """Run one command on the engine."""
    match command:
        case PlaceOrder():
            return engine.place_order(
                command.order_id,
                command.buyer_id,
                command.gpu,
                command.gpus,
                now=command.now,
                currency=command.currency,
                order_type=command.order_type,
                price_micros=command.price_micros,
                tier=command.tier,
                region=command.region,
                hours=command.hours,
                time_in_force=command.time_in_force,
                expires_at=command.expires_at,
            )
        case AddOffer():
            return engine.add_offer(
                command.offer_id,
                command.seller_id,
                command.gpu,
                command.tier,
                command.price_micros,
                command.currency,
                command.gpus,
                now=command.now,
                billing=command.billing,
                region=command.region,
                min_hours=command.min_hours,
                available_until=command.available_until,
            )
        case ChangeOffer():
            return engine.change_offer(
                command.offer_id,
                now=command.now,
                price_micros=command.price_micros,
                gpus=command.gpus,
            )
        case WithdrawOffer():
            return engine.withdraw_offer(command.offer_id, now=command.now)
        case CancelOrder():
            return engine.cancel_order(command.order_id, now=command.now)
        case Expire():
            return engine.expire(command.now)
        case SetFx():
            return engine.set_fx(command.rates, now=command.now)


def books_changed(
    engine: MatchingEngine, command: Command, result: Result
) -> list[tuple[str, str]]:
    """The books (gpu, tier) whose aggregated levels ``command`` may have changed, each once.

    A new FX rate re-ranks what rests in its currency without reporting those levels, so it
    names every book; any other command names the books of the levels its result reports.
    """
    if isinstance(command, SetFx) and result.rejection is None:
        return engine.books()
    return changed_books(result.levels)
