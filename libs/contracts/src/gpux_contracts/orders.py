"""Buyers' orders: commands from the gateway, funding by billing, status from the book."""

from __future__ import annotations

from decimal import Decimal
from enum import StrEnum
from typing import ClassVar

from pydantic import AwareDatetime, Field

from gpux_contracts.base import FrozenModel
from gpux_contracts.events import Payload
from gpux_contracts.money import Currency, DecimalAmount


class OrderType(StrEnum):
    """How an order takes offers."""

    MARKET = "market"
    """Take the best offers now (an optional price cap), never rest."""
    LIMIT = "limit"
    """Take offers at or below the limit; rest the remainder as a bid (unless IOC/FOK)."""


class OrderTier(StrEnum):
    """Which offers an order may take."""

    ON_DEMAND = "on_demand"
    """Only on-demand offers."""
    INTERRUPTIBLE = "interruptible"
    """Only interruptible offers."""
    ANY = "any"
    """Either, best price first."""


class TimeInForce(StrEnum):
    """How long an order stays."""

    GTC = "gtc"
    """Good till cancelled."""
    GTD = "gtd"
    """Good till ``expires_at``."""
    IOC = "ioc"
    """Immediate or cancel: fill what can be filled now, cancel the rest."""
    FOK = "fok"
    """Fill or kill: all now, or nothing."""


class OrderStatus(StrEnum):
    """Where an order stands."""

    PENDING_FUNDS = "pending_funds"
    """Placed; billing has not confirmed the hold yet."""
    OPEN = "open"
    """On the book (or being matched), nothing filled yet."""
    PARTIALLY_FILLED = "partially_filled"
    """Some GPUs filled, the rest still open."""
    FILLED = "filled"
    """Every GPU filled."""
    CANCELLED = "cancelled"
    """Ended by the buyer, or the unfilled rest of a market/IOC/FOK order."""
    EXPIRED = "expired"
    """A GTD order reached ``expires_at``."""
    REJECTED = "rejected"
    """Refused (by billing: insufficient funds; by the book: a rule); ``reason`` says why."""


class OrderKey(FrozenModel):
    """What addresses an order on the book: its id, its buyer, its GPU (the book's key)."""

    order_id: str
    buyer_id: str
    gpu: str


class OrderPlaced(Payload, OrderKey):
    """A buyer placed an order (a command; billing funds it before the book sees it)."""

    event_type: ClassVar[str] = "order.placed"
    schema_version: ClassVar[int] = 1
    gpus: int = Field(ge=1)
    type: OrderType
    max_price_per_gpu_hour: DecimalAmount | None = Field(
        default=None, description="Limit price (required for limit), or a market order's cap."
    )
    currency: Currency
    tier: OrderTier
    region: str | None = None
    hours: int | None = Field(default=None, ge=1, description="Rental length; None = open-ended.")
    time_in_force: TimeInForce
    expires_at: AwareDatetime | None = None
    wallet_currency: Currency | None = Field(
        default=None,
        description="Pay from this wallet (converted at the current rate); None: `currency`.",
    )
    rebuy_on_interruption: bool = Field(
        default=False,
        description="When a lease of this order is interrupted, place the same order again"
        " (same limit and tier, the lease's GPUs), so a checkpointing job resumes on the next"
        " cheapest capacity.",
    )
    rebuy_of: str | None = Field(
        default=None, description="The interrupted lease this order re-buys, if it does."
    )
    min_reliability: Decimal | None = Field(
        default=None,
        ge=0,
        le=1,
        decimal_places=4,
        description="Fill only from sellers whose reliability rate (leases ready in time over"
        " counted leases, `gpux_contracts.reliability`) is at least this; a seller with no"
        " counted lease does not qualify. None: any seller. Added to version 1 with a default.",
    )


class OrderCancelRequested(Payload, OrderKey):
    """A buyer asked to cancel an order's open remainder (a command)."""

    event_type: ClassVar[str] = "order.cancel_requested"
    schema_version: ClassVar[int] = 1


class OrderFunded(Payload):
    """Billing holds the buyer's funds for the order; the book may take it."""

    event_type: ClassVar[str] = "order.funded"
    schema_version: ClassVar[int] = 1

    order: OrderPlaced
    hold_id: str
    held: DecimalAmount = Field(description="Amount held, in `held_currency`.")
    held_currency: Currency


class OrderStatusChanged(Payload, OrderKey):
    """An order's status changed (from billing or from the book)."""

    event_type: ClassVar[str] = "order.status_changed"
    schema_version: ClassVar[int] = 1
    status: OrderStatus
    filled_gpus: int = Field(ge=0)
    remaining_gpus: int = Field(ge=0)
    reason: str | None = None
    shortfall: DecimalAmount | None = Field(
        default=None, description="With `insufficient_funds`: how much is missing."
    )
    shortfall_currency: Currency | None = None


class TradeExecuted(Payload):
    """One fill: a buyer's order took GPUs from a seller's offer (at the resting price)."""

    event_type: ClassVar[str] = "trade.executed"
    schema_version: ClassVar[int] = 1

    trade_id: str = Field(description="Deterministic: the same input gives the same id.")
    order_id: str
    offer_id: str
    buyer_id: str
    seller_id: str
    gpu: str
    tier: str
    gpus: int = Field(ge=1)
    price_per_gpu_hour: DecimalAmount
    currency: Currency
    billing: str = Field(description="`hour` or `second`: how the lease is charged.")
    hours: int | None = Field(default=None, description="Rental length; None = open-ended.")
    executed_at: AwareDatetime
    starts_at: AwareDatetime | None = Field(
        default=None,
        description="When the lease starts: `executed_at` (None), or later when the GPUs are"
        " an interrupted lease's, given to this on-demand order at its `interrupt_at`.",
    )
    provisioning_timeout_seconds: int = Field(
        default=0,
        ge=0,
        description="The offer's provisioning timeout: the seller must post access within"
        " this long after the lease starts, or the lease fails. 0 (also older records): the"
        " machines are ready at the start.",
    )
