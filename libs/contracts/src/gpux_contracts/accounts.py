"""Events about accounts, produced by the gateway (which owns accounts and keys)."""

from __future__ import annotations

from enum import StrEnum
from typing import ClassVar

from pydantic import AwareDatetime, Field

from gpux_contracts.events import Payload


class Role(StrEnum):
    """What an account may do on the market."""

    BUYER = "buyer"
    """Buys GPU-hours: places orders, holds a wallet, runs leases."""
    SELLER = "seller"
    """Sells GPU-hours: pushes offers, earns payouts."""


class AccountStatus(StrEnum):
    """Whether an account may act."""

    ACTIVE = "active"
    """May use the API."""
    SUSPENDED = "suspended"
    """Stopped by an admin: its keys are refused, its offers are not accepted."""


class AccountChanged(Payload):
    """An account was registered, or its roles or status changed (latest state, compacted)."""

    event_type: ClassVar[str] = "account.changed"
    schema_version: ClassVar[int] = 1

    account_id: str
    name: str = Field(max_length=100)
    roles: tuple[Role, ...]
    status: AccountStatus


class ApiKeyStatus(StrEnum):
    """Whether an API key may still be used."""

    ACTIVE = "active"
    """Issued and usable."""
    REVOKED = "revoked"
    """Revoked by its account: refused from then on, for good."""


class ApiKeyChanged(Payload):
    """An API key was issued or revoked (latest state, compacted): every gateway instance
    drops what it remembers of the key when it reads this."""

    event_type: ClassVar[str] = "api_key.changed"
    schema_version: ClassVar[int] = 1

    key_id: str = Field(description="The key's public id (`gpx_<key id>_...`).")
    account_id: str
    status: ApiKeyStatus
    changed_at: AwareDatetime = Field(description="When the key was issued or revoked.")
