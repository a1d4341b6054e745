"""Events about accounts, produced by the gateway (which owns accounts and keys)."""

from __future__ import annotations

from enum import StrEnum
from typing import ClassVar

from pydantic import Field

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
