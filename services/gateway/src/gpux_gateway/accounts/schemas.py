"""Request and response bodies of sign-up and the calling account."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from gpux_contracts.accounts import AccountStatus, Role
from gpux_gateway.accounts.repository import AccountRow
from gpux_gateway.entrypoints.schemas import Name, Strict, examples, from_row
from gpux_gateway.keys.schemas import API_KEY, KEY, KeyCreated

ACCOUNT = {
    "id": "01JWQXXABRF8P0H4WB1N5VPJMS",
    "name": "Acme Research",
    "roles": ["buyer"],
    "status": "active",
    "created_at": "2025-06-02T09:00:11Z",
}
"""A buyer's account, as the examples show it."""


class SignUp(Strict):
    """A new account."""

    model_config = examples(
        {"name": "Acme Research", "roles": ["buyer"]},
        {"name": "Nordic GPU Cloud", "roles": ["seller"]},
    )

    name: Name = Field(description="Shown to the account's counterparties.")
    roles: list[Role] = Field(min_length=1, max_length=2, description="buyer, seller or both.")


class AccountOut(BaseModel):
    """An account."""

    model_config = examples(ACCOUNT)

    id: str
    name: str
    roles: list[Role]
    status: AccountStatus
    created_at: datetime


class SignedUp(KeyCreated):
    """A new account and its first key."""

    model_config = examples({"api_key": API_KEY, "key": KEY, "account": ACCOUNT})

    account: AccountOut


def account_out(account: AccountRow) -> AccountOut:
    """The public view of an account."""
    return from_row(AccountOut, account, roles=list(account.roles))
