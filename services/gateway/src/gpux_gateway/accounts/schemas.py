"""Request and response bodies of sign-up and the calling account."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from gpux_contracts.accounts import AccountStatus, Role
from gpux_gateway.accounts.repository import AccountRow
from gpux_gateway.entrypoints.schemas import Name, Strict
from gpux_gateway.keys.schemas import KeyCreated


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


class SignedUp(KeyCreated):
    """A new account and its first key."""

    account: AccountOut


def account_out(account: AccountRow) -> AccountOut:
    """The public view of an account."""
    return AccountOut(
        id=account.id,
        name=account.name,
        roles=list(account.roles),
        status=account.status,
        created_at=account.created_at,
    )
