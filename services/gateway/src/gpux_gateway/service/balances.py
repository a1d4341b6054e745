"""Wallet balances as billing reports them (``billing.balances``): the gateway shows them from
billing's Redis read model, and tells each wallet's account (``balance.updated``)."""

from __future__ import annotations

from gpux_contracts.billing import BalanceChanged
from gpux_contracts.events import Envelope
from gpux_gateway.notifications.types import AccountEventType
from gpux_gateway.service.account_events import tell
from gpux_gateway.service.unit_of_work import GatewayUnitOfWork


async def on_changed(uow: GatewayUnitOfWork, event: Envelope[BalanceChanged]) -> None:
    """The wallet's account hears of its balance after the change (``balance.updated``)."""
    await tell(uow, event, AccountEventType.BALANCE_UPDATED, event.payload.account_id)
