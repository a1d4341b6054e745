"""Commands as data, so a stream can be stored, replayed (recovery) and generated (tests).

``apply`` feeds one to an engine; it is the same as calling the method of the same name.
``encode_command`` / ``decode_command`` are the log's form of a command: its fields by name
as JSON, instants as int epoch microseconds, FX rates as decimal strings and sellers'
reliability rates and totals as ints, so a replay feeds the engine exactly what it was given.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from decimal import Decimal
from typing import Any, NamedTuple

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
    interruptible_price_micros: int | None = None
    """With tier on_demand: the same GPUs are also sold as interruptible at this price."""
    notice_s: int = 120
    """How long before an interruption its lease is told (120 s to 86,400 s)."""
    provisioning_s: int = 0
    """The offer's provisioning timeout (0: ready at the lease's start; a command logged
    before the delivery issue has none and means that)."""


class ChangeOffer(NamedTuple):
    """A seller re-prices an offer or sets its capacity (``MatchingEngine.change_offer``)."""

    now: Instant
    offer_id: str
    price_micros: int | None = None
    gpus: int | None = None
    interruptible_price_micros: int | None = None
    """A new (or first) interruptible price of an on-demand offer."""


class WithdrawOffer(NamedTuple):
    """A seller withdraws an offer (``MatchingEngine.withdraw_offer``)."""

    now: Instant
    offer_id: str


class ReleaseLease(NamedTuple):
    """A lease ended and gives its GPUs back (``MatchingEngine.release_lease``)."""

    now: Instant
    lease_id: str
    offer_id: str
    gpus: int


class ReclaimLease(NamedTuple):
    """A seller takes an interruptible lease's GPUs back (``MatchingEngine.reclaim_lease``)."""

    now: Instant
    offer_id: str
    lease_id: str


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
    min_reliability_bp: int | None = None
    """Fill only from sellers with a reliability rate at least this (basis points); None,
    also a command logged before the reliability issue: any seller."""


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


class SetSellerReliability(NamedTuple):
    """Sellers' reliability rates (``MatchingEngine.set_seller_reliability``)."""

    now: Instant
    rates_bp: Mapping[str, object]
    """Seller id -> rate in basis points (0..10,000); sellers not named keep theirs."""
    totals: Mapping[str, object] | None = None
    """Seller id -> the total of leases its rate was counted over (absent, also in a command
    logged before totals were: 0); a lower total than the engine holds is an older rate."""


Command = (
    AddOffer
    | ChangeOffer
    | WithdrawOffer
    | ReleaseLease
    | ReclaimLease
    | PlaceOrder
    | CancelOrder
    | Expire
    | SetFx
    | SetSellerReliability
)
"""Anything an engine can be told."""


def apply(engine: MatchingEngine, command: Command) -> Result:
    """Run one command on the engine: the method its kind names, with its fields as arguments."""
    method: Callable[..., Result] = getattr(engine, _KIND_OF[type(command)])
    return method(**command._asdict())


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


KINDS: dict[str, type[Any]] = {
    "add_offer": AddOffer,
    "change_offer": ChangeOffer,
    "withdraw_offer": WithdrawOffer,
    "release_lease": ReleaseLease,
    "reclaim_lease": ReclaimLease,
    "place_order": PlaceOrder,
    "cancel_order": CancelOrder,
    "expire": Expire,
    "set_fx": SetFx,
    "set_seller_reliability": SetSellerReliability,
}
"""Each command's kind as the log names it: the name of the engine method it calls."""
_KIND_OF = {cls: kind for kind, cls in KINDS.items()}


def encode_command(command: Command) -> tuple[str, str]:
    """(kind, JSON body) of a command whose instants are int epoch microseconds."""
    body: dict[str, Any] = dict(command._asdict())
    for name, value in body.items():
        if value is not None and not isinstance(value, int | str):
            if name == "rates":
                body[name] = {c: str(rate) for c, rate in sorted(value.items())}
            elif name in {"rates_bp", "totals"}:
                body[name] = dict(sorted(value.items()))
            else:
                raise TypeError(f"{name}: log only int instants, ints and strings")
    return _KIND_OF[type(command)], json.dumps(body, sort_keys=True)


def decode_command(kind: str, body: str | Mapping[str, Any]) -> Command:
    """The inverse of ``encode_command``."""
    data = dict(json.loads(body) if isinstance(body, str) else body)
    if kind == "set_fx":
        data["rates"] = {c: Decimal(rate) for c, rate in data["rates"].items()}
    command: Command = KINDS[kind](**data)
    return command
