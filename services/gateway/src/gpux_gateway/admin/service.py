"""Admin credits to an account's wallet, as commands on ``billing.commands``."""

from __future__ import annotations

from typing import Any

from gpux_contracts.billing import CreditRequested
from gpux_contracts.topics import BILLING_COMMANDS
from gpux_gateway.admin.schemas import CreditAccepted, CreditIn
from gpux_gateway.domain.idempotency import Once, Outcome
from gpux_gateway.service.access import not_found
from gpux_gateway.service.commands import command_id, send
from gpux_gateway.service.idempotency import run_once
from gpux_gateway.service.unit_of_work import GatewayUnitOfWork


async def credit(uow: GatewayUnitOfWork, *, account_id: str, body: CreditIn, once: Once) -> Outcome:
    """Ask billing to credit an existing account, once per Idempotency-Key."""
    if await uow.accounts.get(account_id) is None:
        raise not_found("no such account")

    async def make() -> tuple[int, dict[str, Any]]:
        credit_id = command_id("admin", once.key, f"credit:{account_id}")
        command = CreditRequested(
            credit_id=credit_id,
            account_id=account_id,
            amount=body.amount,
            currency=body.currency,
            reference=body.reference,
            requested_by="admin",
        )
        send(uow, BILLING_COMMANDS, account_id, command, credit_id)
        accepted = CreditAccepted.model_validate(command, from_attributes=True)
        return 202, accepted.model_dump(mode="json")

    return await run_once(uow, once, make)
