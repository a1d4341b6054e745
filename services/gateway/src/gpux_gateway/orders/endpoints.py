"""Routes under /v1/orders: buyers place, cancel, list and read their orders."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from gpux_contracts.accounts import Role
from gpux_gateway.domain.access import Scope
from gpux_gateway.entrypoints.dependencies import (
    WRITE_ROUTE,
    GatewayDep,
    PrincipalDep,
    UnitOfWorkDep,
    write_route,
)
from gpux_gateway.entrypoints.idempotency import IdempotencyDep
from gpux_gateway.entrypoints.schemas import Page, PageQueryDep, ResourceId
from gpux_gateway.orders import service
from gpux_gateway.orders.schemas import OrderDetailOut, OrderIn, OrderOut
from gpux_gateway.service.access import account_id_for

router = APIRouter(prefix="/v1/orders", tags=["orders"])


@router.post(
    "",
    **WRITE_ROUTE,
    response_model=OrderOut,
    summary="Order GPUs (buyers)",
)
async def place_order(
    *,
    body: OrderIn,
    who: PrincipalDep,
    uow: UnitOfWorkDep,
    idem: IdempotencyDep,
    gw: GatewayDep,
) -> JSONResponse:
    buyer_id = account_id_for(who, Scope.ORDERS_WRITE, Role.BUYER)
    once = idem.once(body, scope=buyer_id)
    unknown = gw.views.catalog.lacks_gpu(body.gpu)
    return idem.answer(
        await service.place(uow, buyer_id=buyer_id, order=body, once=once, unknown_gpu=unknown)
    )


@router.delete(
    "/{order_id}",
    **write_route((409, "The order is final already (`/problems/order-closed`)")),
    response_model=OrderOut,
    summary="Cancel the open rest",
)
async def cancel_order(order_id: ResourceId, who: PrincipalDep, uow: UnitOfWorkDep) -> OrderOut:
    buyer_id = account_id_for(who, Scope.ORDERS_WRITE, Role.BUYER)
    return await service.cancel(uow, buyer_id=buyer_id, order_id=order_id)


@router.get("", response_model=Page[OrderOut], summary="The buyer's orders")
async def list_orders(
    who: PrincipalDep,
    uow: UnitOfWorkDep,
    page: PageQueryDep,
) -> Page[OrderOut]:
    buyer_id = account_id_for(who, Scope.READ, Role.BUYER)
    return await service.page(uow, buyer_id, limit=page.limit, cursor=page.cursor)


@router.get(
    "/{order_id}",
    response_model=OrderDetailOut,
    summary="One of the buyer's orders, with fills",
)
async def get_order(order_id: ResourceId, who: PrincipalDep, uow: UnitOfWorkDep) -> OrderDetailOut:
    buyer_id = account_id_for(who, Scope.READ, Role.BUYER)
    return await service.get(uow, buyer_id, order_id)
