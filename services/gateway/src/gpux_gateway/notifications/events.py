"""An account event: what one account hears of, the same on every channel (pure)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from gpux_contracts.ids import stable_id
from gpux_gateway.notifications.types import AccountEventType

ID_PREFIX = "evt_"


def event_id(source_id: str, account_id: str, type_: AccountEventType) -> str:
    """The public id of the event ``source_id`` (an event or a request) means for the account:
    the same each time the source is applied, so a redelivered source records nothing new."""
    return ID_PREFIX + stable_id(source_id, account_id, type_.value)


@dataclass(frozen=True, slots=True)
class AccountEvent:
    """One account's event; ``data`` is JSON-able (strings, numbers, booleans, None, lists
    and dicts of them)."""

    id: str
    account_id: str
    type: AccountEventType
    data: dict[str, Any]
    created_at: datetime

    @classmethod
    def of(
        cls,
        source_id: str,
        account_id: str,
        type_: AccountEventType,
        data: dict[str, Any],
        created_at: datetime,
    ) -> AccountEvent:
        """The event ``source_id`` means for the account, with its stable id."""
        return cls(event_id(source_id, account_id, type_), account_id, type_, data, created_at)

    def public(self) -> dict[str, Any]:
        """The public shape: ``{"id", "type", "created_at", "account_id", "data"}``."""
        return {
            "id": self.id,
            "type": self.type.value,
            "created_at": self.created_at.isoformat().replace("+00:00", "Z"),
            "account_id": self.account_id,
            "data": self.data,
        }
