"""Re-buy on interruption (pure): when a lease of an order placed with
``rebuy_on_interruption`` ends ``interrupted``, the gateway places the same order again for
the lease's GPUs, once per lease.

The new order's id and its command's id are derived from the lease's id, so however often the
lease's end is read (a replay, a redelivery under another event id) one order is placed.
"""

from __future__ import annotations

from datetime import datetime

from gpux_contracts.ids import stable_id
from gpux_contracts.orders import OrderPlaced, TimeInForce


def rebuy_order_id(lease_id: str) -> str:
    """The id of the order that re-buys the interrupted lease ``lease_id``."""
    return stable_id("gateway.rebuy", lease_id)


def rebuy_event_id(lease_id: str) -> str:
    """The event id of that order's ``order.placed`` (a replay is recognised downstream)."""
    return stable_id("gateway.rebuy.placed", lease_id)


def rebuy(original: OrderPlaced, *, lease_id: str, gpus: int, now: datetime) -> OrderPlaced | None:
    """The order that re-buys an interrupted lease of ``original`` (as its buyer placed it),
    or None when none is due.

    The same type, limit or cap, currency, tier, region, hours, time in force, expiry, wallet
    and minimum reliability (a buyer who left an unreliable seller is not sent back to one),
    for the lease's ``gpus``, asking to be bought again in turn. None when the order
    did not ask for it, or when a ``gtd`` order's expiry has passed (it would expire at once).
    """
    if not original.rebuy_on_interruption:
        return None
    if original.time_in_force is TimeInForce.GTD and (
        original.expires_at is None or original.expires_at <= now
    ):
        return None
    return original.model_copy(
        update={"order_id": rebuy_order_id(lease_id), "gpus": gpus, "rebuy_of": lease_id}
    )
