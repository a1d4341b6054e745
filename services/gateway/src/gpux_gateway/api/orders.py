"""Buyers' orders: place (a command for billing to fund), cancel, list and read their own."""

from typing import Annotated, Any

import asyncpg
from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import JSONResponse

from gpux_contracts.accounts import Role
from gpux_contracts.ids import new_id
from gpux_contracts.money import canonical, from_micros
from gpux_contracts.orders import OrderCancelRequested, OrderPlaced
from gpux_contracts.topics import ORDERS_COMMANDS
from gpux_gateway.adapters import repository
from gpux_gateway.api.auth import account_id_for, principal_dependency
from gpux_gateway.api.common import command_id, create_once, envelope
from gpux_gateway.api.schemas import (
    Cursor,
    OrderDetailOut,
    OrderFillOut,
    OrderIn,
    OrderOut,
    Page,
    ResourceId,
)
from gpux_gateway.context import Gateway
from gpux_gateway.domain.access import Principal, Scope
from gpux_gateway.domain.windows import check_window
from gpux_gateway.idempotency import IdemKey, check_key
from gpux_platform.broker import Outgoing
from gpux_platform.outbox import add as add_to_outbox
from gpux_platform.problems import ProblemError


def order_out(row: asyncpg.Record) -> OrderOut:
    """The buyer's view of a stored order."""
    price = row["max_price_micros"]
    shortfall = row["shortfall_micros"]
    return OrderOut(
        id=row["id"],
        gpu=row["gpu"],
        gpus=row["gpus"],
        filled_gpus=row["filled_gpus"],
        remaining_gpus=row["remaining_gpus"],
        type=row["type"],
        max_price_per_gpu_hour=None if price is None else canonical(from_micros(price)),
        currency=row["currency"],
        tier=row["tier"],
        region=row["region"],
        hours=row["hours"],
        time_in_force=row["time_in_force"],
        expires_at=row["expires_at"],
        status=row["status"],
        reason=row["reason"],
        shortfall=None if shortfall is None else canonical(from_micros(shortfall)),
        shortfall_currency=row["shortfall_currency"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
    )


def fill_out(row: asyncpg.Record) -> OrderFillOut:
    """One stored fill as its buyer sees it."""
    return OrderFillOut(
        trade_id=row["trade_id"],
        gpus=row["gpus"],
        price_per_gpu_hour=canonical(from_micros(row["price_micros"])),
        currency=row["currency"],
        tier=row["tier"],
        billing=row["billing"],
        hours=row["hours"],
        executed_at=row["executed_at"],
    )


def router(gw: Gateway) -> APIRouter:
    """Routes under /v1/orders."""
    api = APIRouter(prefix="/v1/orders", tags=["orders"])
    principal = principal_dependency(gw)

    @api.post("", status_code=202, response_model=OrderOut, summary="Order GPUs (buyers)")
    async def place(
        body: OrderIn,
        request: Request,
        who: Annotated[Principal, Depends(principal)],
        idempotency_key: IdemKey = None,
    ) -> JSONResponse:
        buyer_id = account_id_for(who, Scope.ORDERS_WRITE, Role.BUYER)
        idem = check_key(idempotency_key)
        problem = check_window(body.expires_at, gw.clock.now(), field="expires_at")
        if problem:
            raise ProblemError(422, "validation-error", "Request validation failed", problem)
        event_id = command_id(buyer_id, idem, "order")

        async def create(conn: asyncpg.Connection) -> tuple[int, dict[str, Any]]:
            command = OrderPlaced(order_id=new_id(), buyer_id=buyer_id, **body.model_dump())
            await repository.insert_order(conn, command, gw.clock.now())
            message = Outgoing(ORDERS_COMMANDS, command.gpu, envelope(gw, command, event_id))
            await add_to_outbox(conn, "gateway", [message])
            row = await repository.get_order(conn, buyer_id, command.order_id)
            assert row is not None
            return 202, order_out(row).model_dump(mode="json")

        return await create_once(gw, request, scope=buyer_id, key=idem, body=body, create=create)

    @api.delete(
        "/{order_id}", status_code=202, response_model=OrderOut, summary="Cancel the open rest"
    )
    async def cancel(
        order_id: ResourceId, who: Annotated[Principal, Depends(principal)]
    ) -> OrderOut:
        buyer_id = account_id_for(who, Scope.ORDERS_WRITE, Role.BUYER)
        row = await repository.get_order(gw.pool, buyer_id, order_id)
        if row is None:
            raise ProblemError(404, "not-found", "Not found", "no such order")
        if row["status"] in repository.ORDER_FINAL:
            raise ProblemError(409, "order-closed", "Order closed", f"the order is {row['status']}")
        command = OrderCancelRequested(order_id=order_id, buyer_id=buyer_id, gpu=row["gpu"])
        async with gw.pool.acquire() as conn, conn.transaction():
            message = Outgoing(ORDERS_COMMANDS, row["gpu"], envelope(gw, command, new_id()))
            await add_to_outbox(conn, "gateway", [message])
        return order_out(row)

    @api.get("", response_model=Page[OrderOut], summary="The buyer's orders")
    async def list_orders(
        who: Annotated[Principal, Depends(principal)],
        limit: Annotated[int, Query(ge=1, le=100)] = 50,
        cursor: Cursor = None,
    ) -> Page[OrderOut]:
        buyer_id = account_id_for(who, Scope.READ, Role.BUYER)
        rows = await repository.list_orders(gw.pool, buyer_id, cursor, limit + 1)
        items = [order_out(r) for r in rows[:limit]]
        next_cursor = items[-1].id if len(rows) > limit else None
        return Page[OrderOut](items=items, next_cursor=next_cursor)

    @api.get(
        "/{order_id}",
        response_model=OrderDetailOut,
        summary="One of the buyer's orders, with fills",
    )
    async def get_order(
        order_id: ResourceId, who: Annotated[Principal, Depends(principal)]
    ) -> OrderDetailOut:
        buyer_id = account_id_for(who, Scope.READ, Role.BUYER)
        row = await repository.get_order(gw.pool, buyer_id, order_id)
        if row is None:
            raise ProblemError(404, "not-found", "Not found", "no such order")
        fills = await repository.order_fills(gw.pool, buyer_id, order_id)
        return OrderDetailOut(**order_out(row).model_dump(), fills=[fill_out(f) for f in fills])

    return api
