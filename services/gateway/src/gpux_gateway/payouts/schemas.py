"""Request and response bodies of the payouts routes."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from pydantic import BaseModel, Field, StringConstraints

from gpux_contracts.money import Currency, DecimalAmount
from gpux_contracts.payouts import (
    MAX_DESTINATION_CHARS,
    MAX_REFERENCE_CHARS,
    PayoutMethod,
    PayoutRejection,
    PayoutStatus,
)
from gpux_gateway.entrypoints.schemas import (
    PRINTABLE,
    CreditAmount,
    Strict,
    amount,
    examples,
    from_row,
)
from gpux_gateway.payouts.repository import PayoutRow

PAYOUT_ID = "01JWQY4358V6PH2A4FXKQE30X5"
DESTINATION = "IBAN DE89 3704 0044 0532 0130 00"

Destination = Annotated[
    str,
    StringConstraints(
        strip_whitespace=True, min_length=1, max_length=MAX_DESTINATION_CHARS, pattern=PRINTABLE
    ),
]
Reference = Annotated[
    str,
    StringConstraints(
        strip_whitespace=True, min_length=1, max_length=MAX_REFERENCE_CHARS, pattern=PRINTABLE
    ),
]


class NewPayout(Strict):
    """A payout of the seller's payable earnings in one currency."""

    model_config = examples({"currency": "EUR", "amount": "500.00", "destination": DESTINATION})

    currency: Currency
    amount: CreditAmount = Field(
        description="At least `GPUX_PAYOUT_MINIMUM` (10.00 by default) and at most what the"
        " seller's payable balance in the currency holds (billing rejects it otherwise)."
    )
    destination: Destination = Field(
        description="Where to send the money, free text (e.g. an IBAN reference).",
        examples=["IBAN DE89 3704 0044 0532 0130 00"],
    )


class PayoutOut(BaseModel):
    """A seller's payout and where it is."""

    model_config = examples(
        {
            "id": PAYOUT_ID,
            "currency": "EUR",
            "amount": "500.00",
            "method": "manual",
            "destination": DESTINATION,
            "status": "pending",
            "reason": None,
            "reference": "manual",
            "created_at": "2025-06-02T10:05:19Z",
            "updated_at": "2025-06-02T10:05:20Z",
        }
    )

    id: str
    currency: Currency
    amount: DecimalAmount
    method: PayoutMethod
    destination: str
    status: PayoutStatus = Field(
        description="`pending_request` (billing has not decided yet), `pending` (taken from the"
        " payable balance, on its way), `paid` (the admin confirmed the transfer) or `rejected`."
    )
    reason: PayoutRejection | None = Field(
        description="Why it was rejected: `below_minimum`, `insufficient_seller_payable`,"
        " `rejected_by_admin`."
    )
    reference: str = Field(description="The payment's reference (`manual`, then the bank's).")
    created_at: datetime
    updated_at: datetime


class PayoutConfirmIn(Strict):
    """The admin's word that a pending payout's bank transfer was made."""

    model_config = examples({"reference": "SEPA 2025-06-03 E2E-7Q4K2M9X"})

    reference: Reference = Field(description="The bank's reference of the transfer.")


class PayoutRejectIn(Strict):
    """The admin's rejection of a pending payout (its amount goes back to the seller)."""

    model_config = examples({"reason": "the IBAN does not match the account holder"})

    reason: Reference


class PayoutDecisionAccepted(BaseModel):
    """A confirmation or rejection billing will apply."""

    model_config = examples({"payout_id": PAYOUT_ID, "status": "confirm_requested"})

    payout_id: str
    status: str = Field(description="`confirm_requested` or `reject_requested`.")


def payout_out(row: PayoutRow) -> PayoutOut:
    """The public view of a stored payout."""
    return from_row(PayoutOut, row, amount=amount(row.amount_micros))
