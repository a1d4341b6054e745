"""Re-buy on interruption: a lease of an order placed with ``rebuy_on_interruption`` ended
``interrupted``, so the gateway places the same order again for the lease's GPUs
(``domain.rebuy``), with the SSH keys the order named, through the path ``POST /v1/orders``
takes (``service.placing``), in the unit of work that reads the lease's end: the order, its
command and the view's update commit together.

It runs where the view consumers run (``GPUX_GATEWAY_ROLE`` ``all`` or ``views``). It reads
the lease as the unit leaves it (``leases.current``), so a lease opened and ended within one
batch is found. A lease whose end is read before its opening (billing sends a lease's events
in order, on one partition; only a replay from elsewhere could reorder them) is not bought
again.
"""

from __future__ import annotations

from gpux_contracts.accounts import AccountStatus
from gpux_contracts.leases import LeaseEndReason
from gpux_contracts.money import Currency, canonical, from_micros
from gpux_contracts.orders import OrderPlaced, OrderTier, OrderType, TimeInForce
from gpux_gateway.domain.rebuy import rebuy, rebuy_event_id
from gpux_gateway.domain.reliability import shown_minimum
from gpux_gateway.orders.repository import OrderRow
from gpux_gateway.service.placing import place_order
from gpux_gateway.service.unit_of_work import GatewayUnitOfWork


def as_placed(row: OrderRow) -> OrderPlaced:
    """An order as its buyer placed it, from its view (a market order's cap that billing set
    is not the buyer's: the order had none), with its minimum reliability."""
    price = None if row.cap_from_billing else row.max_price_micros
    wallet = row.wallet_currency
    return OrderPlaced(
        order_id=row.id,
        buyer_id=row.buyer_id,
        gpu=row.gpu,
        gpus=row.gpus,
        type=OrderType(row.type),
        max_price_per_gpu_hour=None if price is None else canonical(from_micros(price)),
        currency=Currency(row.currency),
        tier=OrderTier(row.tier),
        region=row.region,
        hours=row.hours,
        time_in_force=TimeInForce(row.time_in_force),
        expires_at=row.expires_at,
        wallet_currency=None if wallet is None else Currency(wallet),
        rebuy_on_interruption=row.rebuy_on_interruption,
        rebuy_of=row.rebuy_of,
        min_reliability=shown_minimum(row.min_reliability_bp),
    )


async def after_interruption(uow: GatewayUnitOfWork, lease_id: str) -> None:
    """Place the re-buy of an interrupted lease, if its order asked for one, once.

    Nothing is placed for a lease not opened yet or not ended ``interrupted`` (its first end
    stays), an order the gateway does not hold, a buyer no longer active, an order that did
    not ask for it, or a re-buy placed already (its id is the lease's: a replayed end, or the
    same end under another event id).
    """
    lease = await uow.leases.current(lease_id)
    if lease is None or lease.order_id is None or lease.gpus is None:
        return
    if lease.end_reason != LeaseEndReason.INTERRUPTED:
        return
    order = await uow.orders.get(lease.buyer_id, lease.order_id)
    account = await uow.accounts.get(lease.buyer_id)
    if order is None or account is None or account.status is not AccountStatus.ACTIVE:
        return
    again = rebuy(as_placed(order), lease_id=lease.id, gpus=lease.gpus, now=uow.now)
    if again is None or await uow.orders.get(again.buyer_id, again.order_id) is not None:
        return
    await place_order(uow, again, rebuy_event_id(lease.id), ssh_key_ids=order.ssh_key_ids)
