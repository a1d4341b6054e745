"""Request and response bodies of the public API (strict: unknown fields are refused)."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Annotated, Generic, TypeVar

from fastapi import Path, Query
from pydantic import (
    AwareDatetime,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    StringConstraints,
    WithJsonSchema,
    model_validator,
)

from gpux_contracts.accounts import AccountStatus, Role
from gpux_contracts.money import Currency, DecimalAmount, to_decimal
from gpux_contracts.offers import BillingGranularity, Tier
from gpux_contracts.orders import OrderStatus, OrderTier, OrderType, TimeInForce
from gpux_gateway.domain.access import Scope

Price = Annotated[
    Decimal,
    BeforeValidator(to_decimal),
    Field(gt=Decimal(0), lt=Decimal(100_000), decimal_places=4),
    PlainSerializer(lambda d: format(d, "f"), return_type=str, when_used="json"),
    WithJsonSchema(
        {
            "type": "string",
            "pattern": (
                r"^([1-9][0-9]{0,4}(\.[0-9]{1,4})?"
                r"|0\.([1-9][0-9]{0,3}|0[1-9][0-9]{0,2}|00[1-9][0-9]?|000[1-9]))$"
            ),
            "examples": ["0.33", "2.8800"],
        }
    ),
]
"""A positive price per GPU-hour: a decimal string, at most 4 decimals, below 100000."""

CreditAmount = Annotated[
    Decimal,
    BeforeValidator(to_decimal),
    Field(gt=Decimal(0), lt=Decimal(1_000_000), decimal_places=2),
    PlainSerializer(lambda d: format(d, "f"), return_type=str, when_used="json"),
    WithJsonSchema(
        {
            "type": "string",
            "pattern": r"^([1-9][0-9]{0,5}(\.[0-9]{1,2})?|0\.([1-9][0-9]?|0[1-9]))$",
            "examples": ["25.00"],
        }
    ),
]
"""A positive amount with at most 2 decimals, below one million."""

# PostgreSQL text cannot hold NUL, and control characters have no place in names.
_PRINTABLE = r"^[^\x00-\x1f\x7f]+$"
Name = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=100, pattern=_PRINTABLE),
]
ResourceId = Annotated[
    str, Path(pattern=r"^[0-9A-Za-z_-]{1,64}$", description="A resource id (a ULID).")
]
"""An id in a path: anything else is a 422 before it reaches a query."""

Cursor = Annotated[
    str | None,
    Query(pattern=r"^[0-9A-Za-z_-]{1,64}$", description="`next_cursor` of the previous page."),
]
"""A pagination cursor."""

Slug = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9-]{0,39}$")]
Region = Annotated[str, StringConstraints(pattern=r"^[a-z]{2}(-[a-z0-9]{1,20}){0,2}$")]


class Strict(BaseModel):
    """Requests refuse fields they do not know."""

    model_config = ConfigDict(extra="forbid")


class SignUp(Strict):
    """A new account."""

    name: Name = Field(description="Shown to the account's counterparties.")
    roles: list[Role] = Field(min_length=1, max_length=2, description="buyer, seller or both.")


class AccountOut(BaseModel):
    """An account."""

    id: str
    name: str
    roles: list[Role]
    status: AccountStatus
    created_at: datetime


class KeyOut(BaseModel):
    """An API key, without its secret."""

    id: str
    name: str
    prefix: str = Field(description="The public start of the key, `gpx_<id>`.")
    scopes: list[Scope]
    created_at: datetime
    revoked_at: datetime | None


class KeyCreated(BaseModel):
    """A new key: `api_key` is shown in this response only."""

    api_key: str = Field(description="The whole key. Store it now: gpux keeps only a digest.")
    key: KeyOut


class SignedUp(KeyCreated):
    """A new account and its first key."""

    account: AccountOut


class NewKey(Strict):
    """A key to create."""

    name: Name = "api key"
    scopes: list[Scope] | None = Field(
        default=None, max_length=10, description="Default: every scope the account's roles allow."
    )


class OfferIn(Strict):
    """A seller's offer of GPU-hours."""

    gpu: Slug = Field(description="Catalog id of the GPU model, e.g. `rtx-4090`.")
    gpus: int = Field(ge=1, le=4096, description="How many GPUs are offered.")
    price_per_gpu_hour: Price = Field(description="Asking price per GPU-hour.")
    currency: Currency
    tier: Tier
    billing: BillingGranularity
    region: Region | None = None
    min_hours: int | None = Field(default=None, ge=1, le=8760)
    available_until: AwareDatetime | None = None


class OfferBatchIn(Strict):
    """Many offers in one request: accepted together or not at all."""

    offers: list[OfferIn] = Field(min_length=1, max_length=500)


class OfferChange(Strict):
    """A new price or GPU count for an offer (at least one)."""

    price_per_gpu_hour: Price | None = None
    gpus: int | None = Field(default=None, ge=1, le=4096)


class OfferOut(BaseModel):
    """An offer as its seller sees it."""

    id: str
    gpu: str
    gpus: int
    remaining_gpus: int
    price_per_gpu_hour: DecimalAmount
    currency: Currency
    tier: Tier
    billing: BillingGranularity
    region: str | None
    min_hours: int | None
    available_until: datetime | None
    status: str = Field(description="pending, live, rejected, withdrawn, exhausted or expired.")
    reason: str | None = Field(description="Why it was rejected, when it was.")
    created_at: datetime
    updated_at: datetime


class CreditIn(Strict):
    """An admin credit to an account's wallet."""

    amount: CreditAmount
    currency: Currency
    reference: Annotated[str, StringConstraints(min_length=1, max_length=200, pattern=_PRINTABLE)]


class CreditAccepted(BaseModel):
    """A credit command that billing will book."""

    credit_id: str
    account_id: str
    amount: DecimalAmount
    currency: Currency
    status: str = "requested"


class OfferBatchOut(BaseModel):
    """The offers a bulk request created, in request order."""

    items: list[OfferOut]


T = TypeVar("T")


class Page(BaseModel, Generic[T]):
    """One page of a list; pass `next_cursor` as `cursor` for the next."""

    items: list[T]
    next_cursor: str | None


class OrderIn(Strict):
    """A buyer's order for GPU-hours."""

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


class OrderOut(BaseModel):
    """An order as its buyer sees it."""

    id: str
    gpu: str
    gpus: int
    filled_gpus: int
    remaining_gpus: int = Field(description="Still open on the book (0 once the order ended).")
    type: OrderType
    max_price_per_gpu_hour: DecimalAmount | None
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
    created_at: datetime
    updated_at: datetime


class OrderFillOut(BaseModel):
    """One fill of an order: GPUs it got from one offer, at the resting side's price."""

    trade_id: str
    gpus: int
    price_per_gpu_hour: DecimalAmount
    currency: Currency
    tier: Tier = Field(description="The offer's tier (an `any` order learns it here).")
    billing: BillingGranularity
    hours: int | None
    executed_at: datetime


class OrderDetailOut(OrderOut):
    """An order with its fills, oldest first."""

    fills: list[OrderFillOut]
