"""Top-ups and their confirmation, as commands on ``billing.commands``; balances as billing
keeps them."""

from __future__ import annotations

from typing import Any

from gpux_contracts.billing import BalanceChanged, TopupConfirmRequested, TopupRequested
from gpux_contracts.ids import new_id
from gpux_contracts.money import canonical
from gpux_contracts.topics import BILLING_COMMANDS
from gpux_gateway.domain.idempotency import Once, Outcome
from gpux_gateway.service.commands import command_id, send
from gpux_gateway.service.idempotency import run_once
from gpux_gateway.service.unit_of_work import GatewayUnitOfWork
from gpux_gateway.wallets.schemas import (
    BalanceList,
    BalanceOut,
    TopupAccepted,
    TopupConfirmAccepted,
    TopupIn,
)


async def top_up(uow: GatewayUnitOfWork, *, buyer_id: str, body: TopupIn, once: Once) -> Outcome:
    """Ask billing to book a top-up once its provider confirms it, once per Idempotency-Key."""

    async def make() -> tuple[int, dict[str, Any]]:
        event_id = command_id(buyer_id, once.key, "topup")
        command = TopupRequested(
            topup_id=new_id(),
            account_id=buyer_id,
            amount=body.amount,
            currency=body.currency,
            provider=body.provider.value,
        )
        send(uow, BILLING_COMMANDS, buyer_id, command, event_id)
        accepted = TopupAccepted.model_validate(command, from_attributes=True)
        return 202, accepted.model_dump(mode="json")

    return await run_once(uow, once, make)


def confirm(uow: GatewayUnitOfWork, topup_id: str) -> TopupConfirmAccepted:
    """Tell billing a manual top-up's money arrived (the admin's word)."""
    # One command per top-up: confirming twice sends the same id, which billing absorbs.
    event_id = command_id("admin", topup_id, "topup.confirm")
    command = TopupConfirmRequested(topup_id=topup_id, confirmed_by="admin")
    send(uow, BILLING_COMMANDS, topup_id, command, event_id)
    return TopupConfirmAccepted(topup_id=topup_id)


def balances_out(balances: list[BalanceChanged]) -> BalanceList:
    """Billing's balances as the account sees them."""
    return BalanceList(
        items=[
            BalanceOut(
                currency=b.currency, available=canonical(b.available), held=canonical(b.held)
            )
            for b in balances
        ]
    )
