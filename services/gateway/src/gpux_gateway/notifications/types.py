"""The public account event types: the one list the stream, the webhooks and the API's
validation of an endpoint's ``event_types`` take.

Each type names what an account hears of and whose account hears it; ``data`` is the source
event's payload as the API's JSON (``model_dump(mode="json")``: money as decimal strings,
instants ISO 8601 UTC), so its fields are the contract's:

- ``order.updated`` (buyer): an order's status changed (``orders.status``'s
  ``order.status_changed``: ``order_id``, ``buyer_id``, ``gpu``, ``status``, ``filled_gpus``,
  ``remaining_gpus``, ``reason``, ``shortfall``, ``shortfall_currency``).
- ``order.filled`` (buyer): one fill of an order (``trade.executed``: ``trade_id``,
  ``order_id``, ``offer_id``, ``gpus``, ``price_per_gpu_hour``, ``currency``, ...).
- ``offer.updated`` (seller): an offer's status or free GPUs changed
  (``offer.status_changed``: ``offer_id``, ``status``, ``remaining_gpus``, ``reason``, ...).
- ``lease.opened`` (buyer and seller): a lease began (``lease.opened``).
- ``lease.provisioning`` (seller): a lease waits for the seller's access details (its
  deadline, the buyer's public keys).
- ``lease.ready`` (buyer and seller): the seller posted access; charging starts.
- ``lease.failed`` (buyer and seller): the lease was never delivered; nothing charged.
- ``lease.low_balance`` (buyer): the wallet covers little of a lease (``lease.low_balance``).
- ``lease.interruption_notice`` (buyer and seller): an interruptible lease will end
  (``lease.interruption_notice``: ``interrupt_at``, ``cause``, ...).
- ``lease.ended`` (buyer and seller): a lease ended for good, whatever the reason
  (``lease.ended``: ``reason``, ``ended_at``, final ``totals``, ``failure``, ...).
- ``balance.updated`` (the wallet's account): a wallet's balance changed
  (``balance.changed``: ``currency``, ``available``, ``held``, ``as_of``).
- ``payout.updated`` (seller): a payout was requested or decided.

Charges (``lease.charged``, ``leases.settled``) are not account events: too many.
"""

from __future__ import annotations

from enum import StrEnum


class AccountEventType(StrEnum):
    """What an account event tells (its public ``type``)."""

    ORDER_UPDATED = "order.updated"
    ORDER_FILLED = "order.filled"
    OFFER_UPDATED = "offer.updated"
    LEASE_OPENED = "lease.opened"
    LEASE_PROVISIONING = "lease.provisioning"
    LEASE_READY = "lease.ready"
    LEASE_FAILED = "lease.failed"
    LEASE_LOW_BALANCE = "lease.low_balance"
    LEASE_INTERRUPTION_NOTICE = "lease.interruption_notice"
    LEASE_ENDED = "lease.ended"
    BALANCE_UPDATED = "balance.updated"
    PAYOUT_UPDATED = "payout.updated"


EVERY_TYPE = "*"
"""What an endpoint subscribes to for every type."""

ACCOUNT_EVENT_TYPES: frozenset[str] = frozenset(t.value for t in AccountEventType)
"""Every public type name."""


def unknown_types(names: list[str]) -> list[str]:
    """The names that are neither a public type nor ``*`` (what a subscription may not name)."""
    return [n for n in names if n != EVERY_TYPE and n not in ACCOUNT_EVENT_TYPES]
