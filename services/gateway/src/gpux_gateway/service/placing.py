"""Placing an order in a unit of work: the buyer's view of it and its ``order.placed`` command
for billing, written together. One path for the buyer's ``POST /v1/orders`` and for the
gateway's own re-buy of an interrupted lease (``service.rebuy``)."""

from __future__ import annotations

from collections.abc import Sequence

from gpux_contracts.orders import OrderPlaced
from gpux_contracts.topics import ORDERS_COMMANDS
from gpux_gateway.orders.repository import OrderRow
from gpux_gateway.service.commands import send
from gpux_gateway.service.unit_of_work import GatewayUnitOfWork


async def place_order(
    uow: GatewayUnitOfWork,
    command: OrderPlaced,
    event_id: str,
    *,
    ssh_key_ids: Sequence[str] = (),
) -> OrderRow:
    """Store the order (pending_funds, with the SSH keys its leases get) and queue its command
    under ``event_id`` on ``orders.commands`` (key: its GPU), in the unit: both land at its
    commit, or neither."""
    row = await uow.orders.add(command, uow.now, ssh_key_ids=ssh_key_ids)
    send(uow, ORDERS_COMMANDS, command.gpu, command, event_id)
    return row
