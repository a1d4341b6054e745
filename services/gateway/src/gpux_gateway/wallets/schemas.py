"""Request and response bodies of the wallet routes."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, Field

from gpux_contracts.money import Currency, DecimalAmount
from gpux_gateway.entrypoints.schemas import CreditAmount, Strict


class Provider(StrEnum):
    """Who moves the money of a top-up."""

    MANUAL = "manual"
    """A bank transfer; an admin confirms its arrival (`POST /v1/admin/topups/{id}/confirm`)."""
    DEV = "dev"
    """Confirms at once; billing accepts it only with `GPUX_DEV_TOPUPS=true` (local demo)."""


class TopupIn(Strict):
    """Load a wallet."""

    amount: CreditAmount
    currency: Currency
    provider: Provider = Provider.MANUAL


class TopupAccepted(BaseModel):
    """A top-up billing will book once its provider confirms it."""

    topup_id: str
    account_id: str
    amount: DecimalAmount
    currency: Currency
    provider: Provider
    status: str = "requested"


class TopupConfirmAccepted(BaseModel):
    """A confirmation billing will apply (a top-up it does not know yet waits for it)."""

    topup_id: str
    status: str = "confirm_requested"


class BalanceOut(BaseModel):
    """One wallet of the account."""

    currency: Currency
    available: DecimalAmount
    held: DecimalAmount = Field(description="Reserved for open orders and running leases.")
