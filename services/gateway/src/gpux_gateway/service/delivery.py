"""The lease's delivery as the views read it (docs/DELIVERY.md): a lease opened with a
provisioning deadline provisions, ``lease.ready`` runs it, a ``failed`` end fails it.

Beside what ``service.leases`` records of each event (the view and ``lease.opened`` /
``lease.ended`` for both parties), the parties hear of the delivery: the seller of a
provisioning lease gets ``lease.provisioning`` with what it needs to set the machines up (the
lease, its deadline and the buyer's chosen SSH public keys: the order's ``ssh_key_ids``, or
every key of the buyer's when it named none), both parties ``lease.ready`` and
``lease.failed``. Each account event's id is stable per source event and account, so a
redelivered event records nothing new.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from gpux_contracts.events import Envelope
from gpux_contracts.leases import LeaseEnded, LeaseEndReason, LeaseOpened, LeaseReady
from gpux_gateway.notifications.events import AccountEvent
from gpux_gateway.notifications.types import AccountEventType
from gpux_gateway.service import leases
from gpux_gateway.service.unit_of_work import GatewayUnitOfWork


def _instant(at: datetime) -> str:
    """An instant as the API shows it (ISO 8601, UTC as ``Z``)."""
    return at.isoformat().replace("+00:00", "Z")


def _both(
    uow: GatewayUnitOfWork,
    event: Envelope[Any],
    type_: AccountEventType,
    data: dict[str, Any],
    accounts: tuple[str, ...],
) -> list[AccountEvent]:
    return [
        AccountEvent.of(event.event_id, account, type_, data, uow.now)
        for account in dict.fromkeys(accounts)
    ]


async def buyer_keys(uow: GatewayUnitOfWork, lease: LeaseOpened) -> list[dict[str, str]]:
    """The public keys the buyer chose for the lease's order (all its keys when it named none,
    or when the gateway holds no such order), as ``lease.provisioning`` carries them."""
    order = await uow.orders.get(lease.buyer_id, lease.order_id)
    named = list(order.ssh_key_ids) if order is not None else []
    keys = await uow.ssh_keys.listed(lease.buyer_id, named or None)
    return [
        {
            "id": k.id,
            "type": k.type.value,
            "public_key": k.public_key,
            "fingerprint": k.fingerprint,
        }
        for k in keys
    ]


async def provisioning_data(uow: GatewayUnitOfWork, lease: LeaseOpened) -> dict[str, Any]:
    """``lease.provisioning``'s ``data``: the lease, its deadline, the buyer's public keys."""
    assert lease.provisioning_deadline is not None
    return {
        "lease_id": lease.lease_id,
        "order_id": lease.order_id,
        "offer_id": lease.offer_id,
        "buyer_id": lease.buyer_id,
        "seller_id": lease.seller_id,
        "gpu": lease.gpu,
        "gpus": lease.gpus,
        "tier": lease.tier,
        "started_at": _instant(lease.started_at),
        "provisioning_deadline": _instant(lease.provisioning_deadline),
        "ssh_keys": await buyer_keys(uow, lease),
    }


async def on_opened(uow: GatewayUnitOfWork, event: Envelope[LeaseOpened]) -> None:
    """Apply the opening (``service.leases``); a provisioning lease's seller hears what to set
    up (``lease.provisioning``)."""
    await leases.on_opened(uow, event)
    lease = event.payload
    if lease.provisioning_deadline is None:
        return
    data = await provisioning_data(uow, lease)
    await uow.account_events.record(
        AccountEvent.of(
            event.event_id, lease.seller_id, AccountEventType.LEASE_PROVISIONING, data, uow.now
        )
    )


async def on_ready(uow: GatewayUnitOfWork, event: Envelope[LeaseReady]) -> None:
    """Run the provisioning lease from its ``ready_at``; both parties hear of it."""
    ready = event.payload
    await uow.leases.apply_ready(ready, uow.now)
    data = ready.model_dump(mode="json")
    parties = (ready.buyer_id, ready.seller_id)
    await uow.account_events.record(*_both(uow, event, AccountEventType.LEASE_READY, data, parties))


async def on_ended(uow: GatewayUnitOfWork, event: Envelope[LeaseEnded]) -> None:
    """Apply the end (``service.leases``); a lease that never became ready failed, and both
    parties hear why (``lease.failed``)."""
    await leases.on_ended(uow, event)
    ended = event.payload
    if ended.reason is not LeaseEndReason.FAILED:
        return
    data = {
        "lease_id": ended.lease_id,
        "buyer_id": ended.buyer_id,
        "seller_id": ended.seller_id,
        "failure": None if ended.failure is None else ended.failure.value,
        "detail": ended.detail,
        "ended_at": _instant(ended.ended_at),
    }
    parties = (ended.buyer_id, ended.seller_id)
    await uow.account_events.record(
        *_both(uow, event, AccountEventType.LEASE_FAILED, data, parties)
    )
