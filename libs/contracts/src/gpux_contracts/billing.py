"""Commands for billing that other services send."""

from __future__ import annotations

from typing import ClassVar

from pydantic import AwareDatetime, Field

from gpux_contracts.events import Payload
from gpux_contracts.money import Currency, DecimalAmount


class CreditRequested(Payload):
    """An admin credited an account's wallet (e.g. a goodwill credit); billing books it."""

    event_type: ClassVar[str] = "credit.requested"
    schema_version: ClassVar[int] = 1

    credit_id: str = Field(description="Caller-supplied id; a replay books nothing twice.")
    account_id: str
    amount: DecimalAmount
    currency: Currency
    reference: str = Field(max_length=200)
    requested_by: str


class BalanceChanged(Payload):
    """A wallet's balance after a ledger change (latest per account and currency)."""

    event_type: ClassVar[str] = "balance.changed"
    schema_version: ClassVar[int] = 1

    account_id: str
    currency: Currency
    available: DecimalAmount
    held: DecimalAmount
    as_of: AwareDatetime


class TopupRequested(Payload):
    """A buyer asked to load its wallet (a command); billing books it when the provider pays."""

    event_type: ClassVar[str] = "topup.requested"
    schema_version: ClassVar[int] = 1

    topup_id: str = Field(description="Gateway-chosen id; a replay books nothing twice.")
    account_id: str
    amount: DecimalAmount
    currency: Currency
    provider: str = Field(
        default="manual", description="`manual` (an admin confirms) or `dev` (confirms at once)."
    )


class TopupConfirmRequested(Payload):
    """The admin confirmed that a manual top-up's money arrived (a command)."""

    event_type: ClassVar[str] = "topup.confirm_requested"
    schema_version: ClassVar[int] = 1

    topup_id: str
    confirmed_by: str
