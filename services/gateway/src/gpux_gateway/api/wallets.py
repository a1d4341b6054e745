"""Buyers' wallets: top-ups (commands for billing) and balances (billing's Redis read model)."""

from enum import StrEnum
from typing import Annotated, Any

import asyncpg
from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from gpux_contracts.accounts import Role
from gpux_contracts.billing import TopupConfirmRequested, TopupRequested
from gpux_contracts.ids import new_id
from gpux_contracts.money import Currency, DecimalAmount, canonical
from gpux_contracts.topics import BILLING_COMMANDS
from gpux_gateway.api.auth import account_id_for, principal_dependency, problem_from
from gpux_gateway.api.common import command_id, create_once, envelope
from gpux_gateway.api.schemas import CreditAmount, ResourceId, Strict
from gpux_gateway.context import Gateway
from gpux_gateway.domain.access import AccessError, Principal, Scope
from gpux_gateway.idempotency import IdemKey, check_key
from gpux_gateway.readmodels.balances import account_balances
from gpux_platform.broker import Outgoing
from gpux_platform.outbox import add as add_to_outbox


class Provider(StrEnum):
    """Who moves the money of a top-up."""

    MANUAL = "manual"
    """A bank transfer; an admin confirms its arrival (`POST /v1/admin/topups/{id}/confirm`)."""
    DEV = "dev"
    """Confirms at once; billing accepts it only with `GPUX_DEV_TOPUPS=true` (local demo)."""


class TopupIn(Strict):
    """Load a wallet."""

    amount: CreditAmount
    currency: Currency
    provider: Provider = Provider.MANUAL


class TopupAccepted(BaseModel):
    """A top-up billing will book once its provider confirms it."""

    topup_id: str
    account_id: str
    amount: DecimalAmount
    currency: Currency
    provider: Provider
    status: str = "requested"


class TopupConfirmAccepted(BaseModel):
    """A confirmation billing will apply (a top-up it does not know yet waits for it)."""

    topup_id: str
    status: str = "confirm_requested"


class BalanceOut(BaseModel):
    """One wallet of the account."""

    currency: Currency
    available: DecimalAmount
    held: DecimalAmount = Field(description="Reserved for open orders and running leases.")


def router(gw: Gateway) -> APIRouter:
    """Routes /v1/topups, /v1/accounts/me/balances and /v1/admin/topups/{id}/confirm."""
    api = APIRouter(tags=["wallets"])
    principal = principal_dependency(gw)

    @api.post(
        "/v1/topups",
        status_code=202,
        response_model=TopupAccepted,
        summary="Top up the wallet (buyers); billing books it when the provider confirms",
    )
    async def top_up(
        body: TopupIn,
        request: Request,
        who: Annotated[Principal, Depends(principal)],
        idempotency_key: IdemKey = None,
    ) -> JSONResponse:
        buyer_id = account_id_for(who, Scope.WALLET_WRITE, Role.BUYER)
        idem = check_key(idempotency_key)

        async def create(conn: asyncpg.Connection) -> tuple[int, dict[str, Any]]:
            event_id = command_id(buyer_id, idem, "topup")
            topup_id = new_id()
            command = TopupRequested(
                topup_id=topup_id,
                account_id=buyer_id,
                amount=body.amount,
                currency=body.currency,
                provider=body.provider.value,
            )
            message = Outgoing(BILLING_COMMANDS, buyer_id, envelope(gw, command, event_id))
            await add_to_outbox(conn, "gateway", [message])
            accepted = TopupAccepted(
                topup_id=topup_id,
                account_id=buyer_id,
                amount=body.amount,
                currency=body.currency,
                provider=body.provider,
            )
            return 202, accepted.model_dump(mode="json")

        return await create_once(gw, request, scope=buyer_id, key=idem, body=body, create=create)

    @api.get(
        "/v1/accounts/me/balances",
        response_model=list[BalanceOut],
        summary="Available and held balance per currency",
        description=(
            "One item per currency the account's wallet has ever used (a currency never "
            "topped up is absent, not zero), from billing's read model: a change shows "
            "once billing has booked it."
        ),
    )
    async def balances(who: Annotated[Principal, Depends(principal)]) -> list[BalanceOut]:
        buyer_id = account_id_for(who, Scope.READ, Role.BUYER)
        return [
            BalanceOut(
                currency=b.currency, available=canonical(b.available), held=canonical(b.held)
            )
            for b in await account_balances(gw, buyer_id)
        ]

    @api.post(
        "/v1/admin/topups/{topup_id}/confirm",
        status_code=202,
        response_model=TopupConfirmAccepted,
        summary="Confirm a manual top-up's money arrived (admin)",
        tags=["admin"],
    )
    async def confirm(
        topup_id: ResourceId, who: Annotated[Principal, Depends(principal)]
    ) -> TopupConfirmAccepted:
        try:
            who.require_admin()
        except AccessError as exc:
            raise problem_from(exc) from None
        # One command per top-up: confirming twice sends the same id, which billing absorbs.
        event_id = command_id("admin", topup_id, "topup.confirm")
        command = TopupConfirmRequested(topup_id=topup_id, confirmed_by="admin")
        async with gw.pool.acquire() as conn, conn.transaction():
            message = Outgoing(BILLING_COMMANDS, topup_id, envelope(gw, command, event_id))
            await add_to_outbox(conn, "gateway", [message])
        return TopupConfirmAccepted(topup_id=topup_id)

    return api
