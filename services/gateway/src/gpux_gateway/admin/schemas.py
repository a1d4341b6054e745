"""Request and response bodies of the admin's account routes."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, StringConstraints

from gpux_contracts.money import Currency, DecimalAmount
from gpux_gateway.entrypoints.schemas import PRINTABLE, CreditAmount, Strict


class CreditIn(Strict):
    """An admin credit to an account's wallet."""

    amount: CreditAmount
    currency: Currency
    reference: Annotated[str, StringConstraints(min_length=1, max_length=200, pattern=PRINTABLE)]


class CreditAccepted(BaseModel):
    """A credit command that billing will book."""

    credit_id: str
    account_id: str
    amount: DecimalAmount
    currency: Currency
    status: str = "requested"
