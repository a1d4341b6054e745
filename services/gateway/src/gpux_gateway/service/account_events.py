"""The account events a consumed event means: each party's own, with the event's payload as
the API's JSON (``data``), recorded through the unit of work with the views' changes."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from gpux_contracts.events import Envelope
from gpux_gateway.notifications.events import AccountEvent
from gpux_gateway.notifications.types import AccountEventType
from gpux_gateway.service.unit_of_work import GatewayUnitOfWork


def events_of(
    uow: GatewayUnitOfWork,
    event: Envelope[Any],
    type_: AccountEventType,
    accounts: Iterable[str],
) -> list[AccountEvent]:
    """What ``event`` means for each account (an account named twice, e.g. a lease's buyer
    that is its seller too, hears it once), stamped with the unit's instant."""
    data = event.payload.model_dump(mode="json")
    return [
        AccountEvent.of(event.event_id, account, type_, data, uow.now)
        for account in dict.fromkeys(accounts)
    ]


async def tell(
    uow: GatewayUnitOfWork, event: Envelope[Any], type_: AccountEventType, *accounts: str
) -> None:
    """Record what ``event`` means for each account."""
    await uow.account_events.record(*events_of(uow, event, type_, accounts))
