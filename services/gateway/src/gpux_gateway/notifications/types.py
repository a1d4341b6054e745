"""The public account event types: the one list the stream, the webhooks and the API's
validation of an endpoint's ``event_types`` take.

Each type names what an account hears of, whose account hears it and what ``data`` holds
(money as decimal strings, instants as ISO 8601 UTC, as the API shows them):

- ``order.updated`` (buyer): an order's status changed. ``data``: ``order_id``, ``status``,
  ``filled_gpus``, ``remaining_gpus``, ``reason``, ``shortfall``, ``shortfall_currency``.
- ``order.filled`` (buyer): one fill of an order (a trade). ``data``: ``order_id``,
  ``trade_id``, ``offer_id``, ``gpu``, ``tier``, ``gpus``, ``price_per_gpu_hour``,
  ``currency``, ``billing``, ``hours``, ``executed_at``, ``starts_at``.
- ``offer.updated`` (seller): an offer's status changed. ``data``: ``offer_id``, ``status``,
  ``reason``, ``available_gpus``.
- ``lease.opened`` (buyer and seller): a lease began. ``data``: the lease (``lease_id``,
  ``order_id``, ``offer_id``, ``trade_id``, ``buyer_id``, ``seller_id``, ``gpu``, ``tier``,
  ``gpus``, ``price_per_gpu_hour``, ``currency``, ``billing``, ``hours``, ``started_at``,
  ``status``, ``provisioning_deadline``).
- ``lease.provisioning`` (seller): a lease waits for the seller's access details; ``data``:
  the lease, its deadline and the buyer's public keys.
- ``lease.ready`` (buyer and seller): the seller posted access; charging starts.
- ``lease.failed`` (buyer and seller): the lease could not be delivered; nothing charged.
- ``lease.low_balance`` (buyer): the buyer's funds ran low for a lease. ``data``:
  ``lease_id``, ``currency``, ``available``, ``noticed_at``.
- ``lease.interruption_notice`` (buyer and seller): an interruptible lease will be
  interrupted. ``data``: ``lease_id``, ``interrupt_at``, ``reason``, ``noticed_at``.
- ``lease.ended`` (buyer and seller): a lease ended for good. ``data``: ``lease_id``,
  ``reason``, ``ended_at``, ``charged_seconds``, ``total_cost``, ``currency``, ``failure``,
  ``detail``.
- ``balance.updated`` (the wallet's account): a wallet's balance changed. ``data``:
  ``currency``, ``available``, ``held``, ``as_of``.
- ``payout.updated`` (seller): a payout was requested or its status changed.

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
