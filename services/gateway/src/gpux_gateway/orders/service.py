"""Buyers' orders: placed (a command for billing to fund) and cancelled as commands on
``orders.commands``; each buyer sees only its own, with the fills the book reported."""

from __future__ import annotations

import dataclasses
from typing import Any

from fastapi.exceptions import RequestValidationError

from gpux_contracts.ids import new_id
from gpux_contracts.orders import (
    OrderCancelRequested,
    OrderKey,
    OrderPlaced,
    OrderStatus,
    OrderStatusChanged,
)
from gpux_contracts.topics import ORDERS_COMMANDS
from gpux_gateway.domain.idempotency import Once, Outcome
from gpux_gateway.domain.orders import UNKNOWN_GPU, is_final
from gpux_gateway.domain.windows import window_problem
from gpux_gateway.entrypoints.schemas import Page, field_error, id_page
from gpux_gateway.orders.repository import OrderRow
from gpux_gateway.orders.schemas import (
    OrderDetailOut,
    OrderIn,
    OrderOut,
    fill_out,
    order_out,
)
from gpux_gateway.service.access import found
from gpux_gateway.service.commands import command_id, send
from gpux_gateway.service.idempotency import run_once
from gpux_gateway.service.placing import place_order
from gpux_gateway.service.unit_of_work import GatewayUnitOfWork
from gpux_platform.problems import ProblemError


async def place(
    uow: GatewayUnitOfWork,
    *,
    buyer_id: str,
    order: OrderIn,
    once: Once,
    unknown_gpu: bool = False,
) -> Outcome:
    """Place an order (pending_funds until billing holds its funds), once per Idempotency-Key.

    An order for a GPU the catalog does not have is refused as an offer for one is: answered
    202, shown ``rejected`` with the reason ``unknown_gpu``, and never sent to be funded.
    """
    problem = window_problem(order.expires_at, uow.now)
    if problem:
        raise field_error(("body", "expires_at"), problem)
    ssh_key_ids = order.chosen_ssh_keys()
    await _own_ssh_keys(uow, buyer_id, order.ssh_key_ids or [])
    event_id = command_id(buyer_id, once.key, "order")

    async def make() -> tuple[int, dict[str, Any]]:
        placed = order.model_dump(exclude={"ssh_key_ids"})
        command = OrderPlaced(order_id=new_id(), buyer_id=buyer_id, **placed)
        if unknown_gpu:
            row = await uow.orders.add(command, uow.now, ssh_key_ids=ssh_key_ids)
            row = await _refuse(uow, row, command, UNKNOWN_GPU)
        else:
            row = await place_order(uow, command, event_id, ssh_key_ids=ssh_key_ids)
        return 202, order_out(row).model_dump(mode="json")

    return await run_once(uow, once, make)


async def _own_ssh_keys(uow: GatewayUnitOfWork, buyer_id: str, named: list[str]) -> None:
    """Refuse (422, one error per id) the named SSH keys that are not on the buyer's account."""
    if not named:
        return
    held = {k.id for k in await uow.ssh_keys.listed(buyer_id, named)}
    errors = [
        {
            "loc": ("body", "ssh_key_ids", i),
            "msg": f"no SSH key {key_id} on this account",
            "type": "value_error",
        }
        for i, key_id in enumerate(named)
        if key_id not in held
    ]
    if errors:
        raise RequestValidationError(errors)


async def _refuse(
    uow: GatewayUnitOfWork, row: OrderRow, order: OrderPlaced, reason: str
) -> OrderRow:
    """Show a just-placed order rejected for ``reason`` (at the commit); the row as shown."""
    refused = OrderStatusChanged(
        **order.model_dump(include=set(OrderKey.model_fields)),
        status=OrderStatus.REJECTED,
        filled_gpus=0,
        remaining_gpus=0,
        reason=reason,
    )
    await uow.orders.apply_status(refused, uow.now)
    return dataclasses.replace(row, status=refused.status.value, remaining_gpus=0, reason=reason)


async def _own_order(uow: GatewayUnitOfWork, buyer_id: str, order_id: str) -> OrderRow:
    return found(await uow.orders.get(buyer_id, order_id), "order")


async def cancel(uow: GatewayUnitOfWork, *, buyer_id: str, order_id: str) -> OrderOut:
    """Ask for the open rest of an order to be cancelled; answers the order as it stands."""
    row = await _own_order(uow, buyer_id, order_id)
    if is_final(row.status):
        raise ProblemError(409, "order-closed", "Order closed", f"the order is {row.status}")
    command = OrderCancelRequested(order_id=order_id, buyer_id=buyer_id, gpu=row.gpu)
    send(uow, ORDERS_COMMANDS, row.gpu, command, new_id())
    return order_out(row)


async def page(
    uow: GatewayUnitOfWork, buyer_id: str, *, limit: int, cursor: str | None
) -> Page[OrderOut]:
    """A page of the buyer's orders, in id order."""
    return id_page(await uow.orders.page(buyer_id, cursor, limit + 1), limit, order_out)


async def get(uow: GatewayUnitOfWork, buyer_id: str, order_id: str) -> OrderDetailOut:
    """One of the buyer's orders with its fills; 404 for any other."""
    row = await _own_order(uow, buyer_id, order_id)
    fills = await uow.orders.fills(buyer_id, order_id)
    return OrderDetailOut(**order_out(row).model_dump(), fills=[fill_out(f) for f in fills])
