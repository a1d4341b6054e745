"""Request and response bodies of the orders routes."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated, Any

from pydantic import (
    AwareDatetime,
    BaseModel,
    BeforeValidator,
    Field,
    StringConstraints,
    WithJsonSchema,
    model_validator,
)
from pydantic_core import PydanticCustomError

from gpux_contracts.money import Currency, DecimalAmount
from gpux_contracts.offers import BillingGranularity, Tier
from gpux_contracts.orders import OrderStatus, OrderTier, OrderType, TimeInForce
from gpux_gateway.domain.reliability import shown_minimum
from gpux_gateway.entrypoints.schemas import (
    Price,
    Region,
    Slug,
    Strict,
    amount,
    examples,
    examples_of,
    from_row,
)
from gpux_gateway.orders.repository import FillRow, OrderRow
from gpux_gateway.reliability.schemas import Rate

ORDER_ID = "01JWQY0PRGDP55WV50HQP4J00Y"
"""An order's id, as the examples show it (its first lease is `<order id>:b1`)."""

MAX_ORDER_SSH_KEYS = 10
"""The most SSH keys an order may name."""

SshKeyId = Annotated[str, StringConstraints(pattern=r"^[0-9A-Za-z_-]{1,64}$")]
"""An SSH key's id, as registered."""

MIN_RELIABILITY_PATTERN = r"^(0(\.[0-9]{1,4})?|1(\.0{1,4})?)$"
"""A minimum reliability as published: a decimal string from 0 to 1, at most four places."""


def _reliability_written(value: Any) -> Any:
    """Refuse, with one clear message, a minimum that is no decimal string 0..1 of at most four
    places (a JSON number, ``0.95000``, ``1.5``, ``5e-1``). The whole string must match: the
    pattern's ``$`` alone would let a trailing newline through (``"0.95\\n"``)."""
    if not isinstance(value, str) or not re.fullmatch(MIN_RELIABILITY_PATTERN, value):
        raise PydanticCustomError(
            "min_reliability",
            "min_reliability must be a decimal string from 0 to 1 with at most four places,"
            ' e.g. "0.95"',
        )
    return value


MinReliability = Annotated[
    DecimalAmount,
    Field(ge=0, le=1, decimal_places=4),
    BeforeValidator(_reliability_written),
    WithJsonSchema(
        {"type": "string", "pattern": MIN_RELIABILITY_PATTERN, "examples": ["0.95", "0.5"]}
    ),
]
"""A seller reliability rate an order asks for at least: ``"0"`` to ``"1"``, four places."""


class OrderIn(Strict):
    """A buyer's order for GPU-hours."""

    model_config = examples(
        {
            "gpu": "h100-sxm",
            "gpus": 2,
            "type": "limit",
            "max_price_per_gpu_hour": "2.60",
            "currency": "USD",
            "tier": "on_demand",
            "hours": 24,
            "time_in_force": "gtc",
            "ssh_key_ids": ["01JWQYD4787JT40YXJSDW0GB9A"],
            "min_reliability": "0.95",
        },
        {
            "gpu": "rtx-4090",
            "gpus": 1,
            "type": "market",
            "currency": "EUR",
            "tier": "interruptible",
            "rebuy_on_interruption": True,
        },
    )

    gpu: Slug = Field(description="Catalog id of the GPU model, e.g. `rtx-4090`.")
    gpus: int = Field(ge=1, le=4096, description="How many GPUs to rent.")
    type: OrderType = Field(description="`market` takes the best offers now; `limit` may rest.")
    max_price_per_gpu_hour: Price | None = Field(
        default=None,
        description="The limit (required for `limit`), or a `market` order's cap (without one,"
        " billing caps it at the best ask plus its slippage allowance, 5 % by default).",
    )
    currency: Currency
    wallet_currency: Currency | None = Field(
        default=None,
        description="Pay from this wallet, converted at the current rate (default: `currency`).",
    )
    tier: OrderTier = OrderTier.ANY
    region: Region | None = None
    hours: int | None = Field(
        default=None, ge=1, le=8760, description="Rental length; absent = open-ended."
    )
    time_in_force: TimeInForce = TimeInForce.GTC
    expires_at: AwareDatetime | None = Field(
        default=None, description="When a `gtd` order leaves the book (required for `gtd` only)."
    )
    rebuy_on_interruption: bool = Field(
        default=False,
        description="When a lease of this order is interrupted, place the same order again"
        " (same type, limit or cap, tier, region, hours, time in force and wallet; the lease's"
        " GPUs), so a checkpointing job resumes on the next cheapest capacity.",
    )
    ssh_key_ids: list[SshKeyId] | None = Field(
        default=None,
        max_length=MAX_ORDER_SSH_KEYS,
        description="Which of the buyer's registered SSH keys (`/v1/accounts/me/ssh-keys`) its"
        " leases' sellers install (at most 10; an id twice counts once). Absent or empty: all"
        " the buyer's keys at the time each lease opens. A key not on the account is a 422.",
    )
    min_reliability: MinReliability | None = Field(
        default=None,
        description="Fill only from sellers whose reliability rate (leases ready in time over"
        " counted leases, as offers show it) is at least this: a decimal string from 0 to 1"
        " with at most four places. A seller with no counted lease does not qualify. Absent:"
        " any seller.",
    )

    @model_validator(mode="after")
    def _consistent(self) -> OrderIn:
        if self.type == OrderType.LIMIT and self.max_price_per_gpu_hour is None:
            raise ValueError("max_price_per_gpu_hour: required for a limit order")
        if self.time_in_force == TimeInForce.GTD and self.expires_at is None:
            raise ValueError("expires_at: required for a gtd order")
        if self.time_in_force != TimeInForce.GTD and self.expires_at is not None:
            raise ValueError("expires_at: only for a gtd order")
        if self.type == OrderType.MARKET and self.time_in_force == TimeInForce.GTD:
            raise ValueError("time_in_force: a market order never rests, so it cannot be gtd")
        return self

    def chosen_ssh_keys(self) -> list[str]:
        """The SSH key ids named, each once, in the order given (empty: all the buyer's)."""
        return list(dict.fromkeys(self.ssh_key_ids or ()))


class OrderOut(BaseModel):
    """An order as its buyer sees it."""

    model_config = examples(
        {
            "id": ORDER_ID,
            "gpu": "h100-sxm",
            "gpus": 2,
            "filled_gpus": 2,
            "remaining_gpus": 0,
            "type": "limit",
            "max_price_per_gpu_hour": "2.60",
            "currency": "USD",
            "tier": "on_demand",
            "region": None,
            "hours": 24,
            "time_in_force": "gtc",
            "expires_at": None,
            "status": "filled",
            "reason": None,
            "shortfall": None,
            "shortfall_currency": None,
            "rebuy_on_interruption": False,
            "rebuy_of": None,
            "ssh_key_ids": ["01JWQYD4787JT40YXJSDW0GB9A"],
            "min_reliability": "0.9500",
            "created_at": "2025-06-02T09:30:12Z",
            "updated_at": "2025-06-02T09:30:13Z",
        }
    )

    id: str
    gpu: str
    gpus: int
    filled_gpus: int
    remaining_gpus: int = Field(description="Still open on the book (0 once the order ended).")
    type: OrderType
    max_price_per_gpu_hour: DecimalAmount | None = Field(
        description="The limit price, or a market order's cap; a market order placed without"
        " one shows the cap billing held it at (and the book limited it to) once it is funded."
    )
    currency: Currency
    tier: OrderTier
    region: str | None
    hours: int | None
    time_in_force: TimeInForce
    expires_at: datetime | None
    status: OrderStatus = Field(
        description="pending_funds, open, partially_filled, filled, cancelled, expired or rejected."
    )
    reason: str | None = Field(description="Why it was rejected or ended unfilled, when it was.")
    shortfall: DecimalAmount | None = Field(
        description="With `insufficient_funds`: how much is missing, in `shortfall_currency`."
    )
    shortfall_currency: Currency | None
    rebuy_on_interruption: bool = Field(
        description="Whether an interrupted lease of this order is bought again."
    )
    rebuy_of: str | None = Field(
        description="The interrupted lease this order re-buys (null: the buyer placed it)."
    )
    ssh_key_ids: list[str] = Field(
        description="The SSH keys the buyer named for its leases (empty: all its keys)."
    )
    min_reliability: Rate | None = Field(
        description="The lowest seller reliability rate it fills from, four places (null: any"
        " seller)."
    )
    created_at: datetime
    updated_at: datetime


class OrderFillOut(BaseModel):
    """One fill of an order: GPUs it got from one offer, at the resting side's price."""

    model_config = examples(
        {
            "trade_id": f"{ORDER_ID}:b1",
            "offer_id": "01JWQY1TWRSQ9BRBPPDJ4A5T1C",
            "gpus": 2,
            "price_per_gpu_hour": "2.49",
            "currency": "USD",
            "tier": "on_demand",
            "billing": "second",
            "hours": 24,
            "executed_at": "2025-06-02T09:30:13Z",
            "starts_at": None,
        }
    )

    trade_id: str = Field(description="Also the id of the lease the fill opened.")
    offer_id: str | None = Field(description="The offer it took.")
    gpus: int
    price_per_gpu_hour: DecimalAmount
    currency: Currency
    tier: Tier = Field(description="The offer's tier (an `any` order learns it here).")
    billing: BillingGranularity
    hours: int | None
    executed_at: datetime
    starts_at: datetime | None = Field(
        description="When its lease starts, if later than `executed_at`: the GPUs are an"
        " interrupted lease's until then (an on-demand order that preempted it)."
    )


class OrderDetailOut(OrderOut):
    """An order with its fills, oldest first."""

    model_config = examples({**examples_of(OrderOut)[0], "fills": examples_of(OrderFillOut)})

    fills: list[OrderFillOut]


def order_out(row: OrderRow) -> OrderOut:
    """The buyer's view of a stored order."""
    price, shortfall = row.max_price_micros, row.shortfall_micros
    return from_row(
        OrderOut,
        row,
        ssh_key_ids=list(row.ssh_key_ids),
        min_reliability=shown_minimum(row.min_reliability_bp),
        max_price_per_gpu_hour=None if price is None else amount(price),
        shortfall=None if shortfall is None else amount(shortfall),
    )


def fill_out(row: FillRow) -> OrderFillOut:
    """One stored fill as its buyer sees it."""
    return from_row(OrderFillOut, row, price_per_gpu_hour=amount(row.price_micros))
