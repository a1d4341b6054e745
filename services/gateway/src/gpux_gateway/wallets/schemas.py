"""Request and response bodies of the wallet routes."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, Field

from gpux_contracts.money import Currency, DecimalAmount
from gpux_gateway.entrypoints.schemas import CreditAmount, Strict, examples, listing

TOPUP_ID = "01JWQY8KP89STSWERR7MFT5XVN"


class Provider(StrEnum):
    """Who moves the money of a top-up."""

    MANUAL = "manual"
    """A bank transfer; an admin confirms its arrival (`POST /v1/admin/topups/{id}/confirm`)."""
    DEV = "dev"
    """Confirms at once; billing accepts it only with `GPUX_DEV_TOPUPS=true` (local demo)."""


class TopupIn(Strict):
    """Load a wallet."""

    model_config = examples(
        {"amount": "250.00", "currency": "USD", "provider": "manual"},
        {"amount": "25.00", "currency": "EUR", "provider": "dev"},
    )

    amount: CreditAmount
    currency: Currency
    provider: Provider = Provider.MANUAL


class TopupAccepted(BaseModel):
    """A top-up billing will book once its provider confirms it."""

    model_config = examples(
        {
            "topup_id": TOPUP_ID,
            "account_id": "01JWQXXABRF8P0H4WB1N5VPJMS",
            "amount": "250.00",
            "currency": "USD",
            "provider": "manual",
            "status": "requested",
        }
    )

    topup_id: str
    account_id: str
    amount: DecimalAmount
    currency: Currency
    provider: Provider
    status: str = "requested"


class TopupConfirmAccepted(BaseModel):
    """A confirmation billing will apply (a top-up it does not know yet waits for it)."""

    model_config = examples({"topup_id": TOPUP_ID, "status": "confirm_requested"})

    topup_id: str
    status: str = "confirm_requested"


class BalanceOut(BaseModel):
    """One wallet of the account."""

    model_config = examples(
        {"currency": "USD", "available": "212.85", "held": "37.15"},
        {"currency": "EUR", "available": "25.00", "held": "0.00"},
    )

    currency: Currency
    available: DecimalAmount
    held: DecimalAmount = Field(description="Reserved for open orders and running leases.")


class BalanceList(BaseModel):
    """The account's wallets, one item per currency it has ever used."""

    model_config = listing(BalanceOut)

    items: list[BalanceOut]
