"""The locks a batch takes first: the leases it stops, interrupts or opens, then its wallets'
owners, in key order.

A unit of work applies a batch's records one after the other, and each record's posting
locks the accounts it touches. Records in arbitrary order would lock owners in arbitrary
order, and two units (a batch of records and a settlement batch, which locks its buyers in
key order) could each wait for the other: a deadlock, which PostgreSQL breaks after a second
by failing one of them. A unit that first takes every owner its batch may post for, in key
order as settlement does, leaves no such cycle among wallets; the leases its stops charge
(and those the book's interruptions write) are taken before them, as settlement takes its
leases before its buyers. (Accounts shared
by everybody, sellers' and the platform's, are still locked per posting: a cycle through
them is rare, and PostgreSQL's deadlock detection turns it into a retried batch.)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from gpux_billing.domain.holds import RELEASING
from gpux_billing.service.unit_of_work import BillingUnitOfWork
from gpux_contracts.billing import CreditRequested, TopupRequested
from gpux_contracts.capacity import LeaseInterruptionRequested
from gpux_contracts.events import Envelope, Payload
from gpux_contracts.leases import LeaseFailureReported, LeaseReadyReported, LeaseStopRequested
from gpux_contracts.orders import OrderPlaced, OrderStatusChanged, TradeExecuted


def _releasing(change: OrderStatusChanged) -> str | None:
    return change.buyer_id if change.status in RELEASING else None


OWNER: Mapping[type[Payload], Callable[[Any], str | None]] = {
    CreditRequested: lambda p: p.account_id,
    TopupRequested: lambda p: p.account_id,
    LeaseStopRequested: lambda p: p.buyer_id,
    LeaseReadyReported: lambda p: p.buyer_id,
    LeaseFailureReported: lambda p: p.buyer_id,
    OrderPlaced: lambda p: p.buyer_id,
    OrderStatusChanged: _releasing,
    TradeExecuted: lambda p: p.buyer_id,
}
"""Whose wallet an event may post for (None: it posts for nobody)."""


def owners(events: Sequence[Envelope[Any]]) -> list[str]:
    """The owners a batch may post for, in key order."""
    found = set()
    for event in events:
        owner_of = OWNER.get(type(event.payload))
        owner = None if owner_of is None else owner_of(event.payload)
        if owner is not None:
            found.add(owner)
    return sorted(found)


LEASE_COMMANDS = (
    LeaseStopRequested,
    LeaseInterruptionRequested,
    LeaseReadyReported,
    LeaseFailureReported,
)
"""The commands that change a lease: the batch locks their leases first (ids too, so a
report or an interruption kept before its trade is where the trade finds it)."""


def stopped(events: Sequence[Envelope[Any]]) -> list[str]:
    """The leases a batch stops, interrupts or reports on, in key order."""
    return sorted({e.payload.lease_id for e in events if isinstance(e.payload, LEASE_COMMANDS)})


def opened(events: Sequence[Envelope[Any]]) -> list[str]:
    """The leases a batch's trades open, in key order: locked like the leases the book
    interrupts, so an interruption that comes before its trade is kept where the trade finds
    it (``service.interruptions``)."""
    return sorted({e.payload.trade_id for e in events if isinstance(e.payload, TradeExecuted)})


async def lock_first(uow: BillingUnitOfWork, events: Sequence[Envelope[Any]]) -> None:
    """Take the batch's leases, then its owners' available balances, each in key order."""
    await uow.leases.lock(sorted({*stopped(events), *opened(events)}))
    await uow.ledger.lock_owners(owners(events))
