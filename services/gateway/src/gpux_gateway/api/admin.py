"""What only the admin key may do: suspend and reactivate accounts, credit wallets."""

from typing import Annotated, Any

import asyncpg
from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse

from gpux_contracts.accounts import AccountStatus
from gpux_contracts.billing import CreditRequested
from gpux_contracts.topics import BILLING_COMMANDS
from gpux_gateway.adapters import repository
from gpux_gateway.api.accounts import account_changed, account_out
from gpux_gateway.api.auth import principal_dependency, problem_from
from gpux_gateway.api.common import command_id, create_once, envelope
from gpux_gateway.api.schemas import AccountOut, CreditAccepted, CreditIn, ResourceId
from gpux_gateway.context import Gateway
from gpux_gateway.domain.access import AccessError, Principal
from gpux_gateway.idempotency import IdemKey, check_key
from gpux_platform.broker import Outgoing
from gpux_platform.outbox import add as add_to_outbox
from gpux_platform.problems import ProblemError


def router(gw: Gateway) -> APIRouter:
    """Routes under /v1/admin."""
    api = APIRouter(prefix="/v1/admin", tags=["admin"])
    principal = principal_dependency(gw)

    def admin_only(who: Principal) -> None:
        try:
            who.require_admin()
        except AccessError as exc:
            raise problem_from(exc) from None

    async def set_status(account_id: str, status: AccountStatus) -> AccountOut:
        async with gw.pool.acquire() as conn, conn.transaction():
            account = await repository.set_account_status(conn, account_id, status, gw.clock.now())
            if account is None:
                raise ProblemError(404, "not-found", "Not found", "no such account")
            await add_to_outbox(conn, "gateway", [account_changed(gw, account)])
        return account_out(account)

    @api.post("/accounts/{account_id}/suspend", response_model=AccountOut, summary="Suspend")
    async def suspend(
        account_id: ResourceId, who: Annotated[Principal, Depends(principal)]
    ) -> AccountOut:
        admin_only(who)
        return await set_status(account_id, AccountStatus.SUSPENDED)

    @api.post("/accounts/{account_id}/reactivate", response_model=AccountOut, summary="Reactivate")
    async def reactivate(
        account_id: ResourceId, who: Annotated[Principal, Depends(principal)]
    ) -> AccountOut:
        admin_only(who)
        return await set_status(account_id, AccountStatus.ACTIVE)

    @api.post(
        "/accounts/{account_id}/credits",
        status_code=202,
        response_model=CreditAccepted,
        summary="Credit an account's wallet (billing books it)",
    )
    async def credit(
        account_id: ResourceId,
        body: CreditIn,
        request: Request,
        who: Annotated[Principal, Depends(principal)],
        idempotency_key: IdemKey = None,
    ) -> JSONResponse:
        admin_only(who)
        idem = check_key(idempotency_key)
        if await repository.get_account(gw.pool, account_id) is None:
            raise ProblemError(404, "not-found", "Not found", "no such account")

        async def create(conn: asyncpg.Connection) -> tuple[int, dict[str, Any]]:
            credit_id = command_id("admin", idem, f"credit:{account_id}")
            command = CreditRequested(
                credit_id=credit_id,
                account_id=account_id,
                amount=body.amount,
                currency=body.currency,
                reference=body.reference,
                requested_by="admin",
            )
            message = Outgoing(BILLING_COMMANDS, account_id, envelope(gw, command, credit_id))
            await add_to_outbox(conn, "gateway", [message])
            accepted = CreditAccepted(
                credit_id=credit_id,
                account_id=account_id,
                amount=body.amount,
                currency=body.currency,
            )
            return 202, accepted.model_dump(mode="json")

        return await create_once(gw, request, scope="admin", key=idem, body=body, create=create)

    return api
