"""Leases (buyers and sellers), the stop command, statements and sellers' earnings.

Everything here is read from billing's events (``billing.leases``, ``billing.ledger``), so
a change shows once the gateway has read it; the stop is a command for billing.
"""

from decimal import Decimal
from typing import Annotated, Any

import asyncpg
from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from gpux_contracts.accounts import Role
from gpux_contracts.leases import LeaseStopRequested
from gpux_contracts.money import Currency, canonical, from_micros
from gpux_contracts.offers import BillingGranularity
from gpux_contracts.topics import BILLING_COMMANDS
from gpux_gateway.adapters import leases
from gpux_gateway.api.auth import account_id_for, principal_dependency
from gpux_gateway.api.common import command_id, create_once, envelope
from gpux_gateway.api.lease_schemas import (
    EarningsList,
    EarningsOut,
    LeaseCursor,
    LeaseId,
    LeaseOut,
    LeasePage,
    LeaseRole,
    LeaseStatus,
    LedgerLineOut,
    LedgerPage,
    LineCursor,
    StopAccepted,
)
from gpux_gateway.context import Gateway
from gpux_gateway.domain.access import Principal, Scope
from gpux_gateway.domain.leases import cost_so_far_micros
from gpux_gateway.idempotency import IdemKey, check_key
from gpux_platform.broker import Outgoing
from gpux_platform.outbox import add as add_to_outbox
from gpux_platform.problems import ProblemError

Limit = Annotated[int, Query(ge=1, le=100, description="Items per page.")]


class _NoBody(BaseModel):
    """What a body-less request is fingerprinted as, for its Idempotency-Key."""


def _amount(micros: int) -> Decimal:
    return canonical(from_micros(micros))


def lease_out(row: asyncpg.Record, gw: Gateway) -> LeaseOut:
    """A stored lease as its parties see it, with its cost up to the gateway's now."""
    billing = BillingGranularity(row["billing"])
    cost = cost_so_far_micros(
        billing=billing,
        running=row["status"] == LeaseStatus.RUNNING,
        price_micros_per_gpu_hour=row["price_micros"],
        gpus=row["gpus"],
        started_at=row["started_at"],
        ends_at=row["ends_at"],
        total_charged_micros=row["total_charged_micros"],
        now=gw.clock.now(),
    )
    return LeaseOut(
        lease_id=row["id"],
        order_id=row["order_id"],
        offer_id=row["offer_id"],
        gpu=row["gpu"],
        tier=row["tier"],
        gpus=row["gpus"],
        buyer_id=row["buyer_id"],
        seller_id=row["seller_id"],
        price_per_gpu_hour=_amount(row["price_micros"]),
        currency=row["currency"],
        wallet_currency=row["wallet_currency"],
        billing=billing,
        hours=row["hours"],
        started_at=row["started_at"],
        ends_at=row["ends_at"],
        status=row["status"],
        end_reason=row["end_reason"],
        ended_at=row["ended_at"],
        charged_through=row["charged_through"],
        total_charged=_amount(row["total_charged_micros"]),
        total_paid=_amount(row["total_paid_micros"]),
        total_fee=_amount(row["total_fee_micros"]),
        total_seller=_amount(row["total_seller_micros"]),
        unpaid=_amount(row["unpaid_micros"]),
        low_balance_at=row["low_balance_at"],
        cost_so_far=_amount(cost),
    )


def line_out(row: asyncpg.Record) -> LedgerLineOut:
    """One stored statement line."""
    rate = row["fx_rate"]
    return LedgerLineOut(
        transfer_id=row["transfer_id"],
        kind=row["transfer_kind"],
        created_at=row["created_at"],
        reference=row["reference"],
        account_kind=row["account_kind"],
        currency=row["currency"],
        amount=_amount(row["amount_micros"]),
        fx_rate=None if rate is None else rate.normalize(),
        fx_base=row["fx_base"],
        fx_quote=row["fx_quote"],
        fx_rate_at=row["fx_rate_at"],
    )


def router(gw: Gateway) -> APIRouter:
    """Routes /v1/leases, /v1/ledger and /v1/accounts/me/earnings."""
    api = APIRouter(tags=["leases"])
    principal = principal_dependency(gw)

    @api.get(
        "/v1/leases",
        response_model=LeasePage,
        summary="The account's leases: those it rents and those it provides",
        description=(
            "A buyer sees the leases it rents, a seller those of its offers, an account with "
            "both roles both (`role` narrows it). In lease id order. A lease shows once the "
            "gateway has read its `lease.opened`."
        ),
    )
    async def list_leases(
        who: Annotated[Principal, Depends(principal)],
        status: LeaseStatus | None = None,
        role: LeaseRole | None = None,
        limit: Limit = 50,
        cursor: LeaseCursor = None,
    ) -> LeasePage:
        required = None if role is None else Role(role.value)
        account_id = account_id_for(who, Scope.READ, required)
        rows = await leases.list_leases(
            gw.pool,
            account_id,
            role=None if role is None else role.value,
            status=None if status is None else status.value,
            after=cursor,
            limit=limit + 1,
        )
        items = [lease_out(r, gw) for r in rows[:limit]]
        return LeasePage(items=items, next_cursor=items[-1].lease_id if len(rows) > limit else None)

    @api.get(
        "/v1/leases/{lease_id}",
        response_model=LeaseOut,
        summary="One lease the account rents or provides",
    )
    async def get_lease(
        lease_id: LeaseId, who: Annotated[Principal, Depends(principal)]
    ) -> LeaseOut:
        account_id = account_id_for(who, Scope.READ)
        row = await leases.get_lease(gw.pool, account_id, lease_id)
        if row is None:
            raise ProblemError(404, "not-found", "Not found", "no such lease")
        return lease_out(row, gw)

    @api.post(
        "/v1/leases/{lease_id}/stop",
        status_code=202,
        response_model=StopAccepted,
        summary="Stop a running lease (its buyer)",
        description=(
            "Sends `lease.stop_requested` to billing, which ends the lease at `requested_at` "
            "(or where it is already paid up to) and answers with `lease.ended`. The lease's "
            "seller is refused with 403 `/problems/lease-buyer-only` (it sees the lease, so "
            "nothing leaks); an ended lease is 409 `/problems/lease-ended`."
        ),
    )
    async def stop(
        lease_id: LeaseId,
        request: Request,
        who: Annotated[Principal, Depends(principal)],
        idempotency_key: IdemKey = None,
    ) -> JSONResponse:
        buyer_id = account_id_for(who, Scope.WALLET_WRITE, Role.BUYER)
        idem = check_key(idempotency_key)
        event_id = command_id(buyer_id, idem, f"lease.stop:{lease_id}")

        async def create(conn: asyncpg.Connection) -> tuple[int, dict[str, Any]]:
            row = await leases.get_lease(conn, buyer_id, lease_id)
            if row is None:
                raise ProblemError(404, "not-found", "Not found", "no such lease")
            if row["buyer_id"] != buyer_id:
                raise ProblemError(
                    403, "lease-buyer-only", "Forbidden", "only the lease's buyer may stop it"
                )
            if row["status"] == LeaseStatus.ENDED:
                raise ProblemError(409, "lease-ended", "Lease ended", "the lease already ended")
            now = gw.clock.now()
            command = LeaseStopRequested(lease_id=lease_id, buyer_id=buyer_id, requested_at=now)
            message = Outgoing(BILLING_COMMANDS, buyer_id, envelope(gw, command, event_id))
            await add_to_outbox(conn, "gateway", [message])
            accepted = StopAccepted(lease_id=lease_id, requested_at=now)
            return 202, accepted.model_dump(mode="json")

        return await create_once(
            gw, request, scope=buyer_id, key=idem, body=_NoBody(), create=create
        )

    @api.get(
        "/v1/ledger",
        response_model=LedgerPage,
        summary="The account's statement: every entry on its balances, newest first",
        tags=["wallets"],
    )
    async def statement(
        who: Annotated[Principal, Depends(principal)],
        currency: Currency | None = None,
        limit: Limit = 50,
        cursor: LineCursor = None,
    ) -> LedgerPage:
        account_id = account_id_for(who, Scope.READ)
        rows = await leases.ledger_lines(
            gw.pool,
            account_id,
            currency=None if currency is None else currency.value,
            before=None if cursor is None else int(cursor),
            limit=limit + 1,
        )
        items = [line_out(r) for r in rows[:limit]]
        next_cursor = str(rows[limit - 1]["seq"]) if len(rows) > limit else None
        return LedgerPage(items=items, next_cursor=next_cursor)

    @api.get(
        "/v1/accounts/me/earnings",
        response_model=EarningsList,
        summary="What the seller's leases earned, per offer currency",
        description=(
            "Sums of the running totals of every lease of the seller's offers: `gross` was "
            "charged, `fee` is the platform's part, `net` the seller's."
        ),
        tags=["accounts"],
    )
    async def earnings(who: Annotated[Principal, Depends(principal)]) -> EarningsList:
        seller_id = account_id_for(who, Scope.READ, Role.SELLER)
        return EarningsList(
            items=[
                EarningsOut(
                    currency=Currency(e.currency),
                    gross=_amount(e.gross_micros),
                    fee=_amount(e.fee_micros),
                    net=_amount(e.net_micros),
                    leases=e.leases,
                    running=e.running,
                )
                for e in await leases.earnings(gw.pool, seller_id)
            ]
        )

    return api
