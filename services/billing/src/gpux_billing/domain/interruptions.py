"""Interruptions: whether the book's interruption of a lease takes, and its notice (pure).

The book interrupts a running interruptible lease at ``interrupt_at``, at least the offer's
notice ahead (an on-demand order takes its GPUs, or their seller reclaims them). Billing
keeps the interruption on the lease, once: from then on the lease is due at
``interrupt_at`` at the latest, and settlement ends it there with ``interrupted``, charged
exactly to that instant (``domain.leases.settle``). Anything else is ignored: a lease that
ended meanwhile (a stop, its funds, its fixed length), one interrupted already, one of
another buyer, and an on-demand lease (never interruptible; the book never asks).

An interruption of a lease billing has not opened yet (its trade comes on another topic) is
``Pending``: kept for the lease's id and applied, by the same verdict, when the trade opens it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum

from gpux_billing.domain.leases import Interruption, Lease, State, whole_seconds
from gpux_contracts.offers import Tier


@dataclass(frozen=True, slots=True)
class Pending:
    """An interruption of a lease whose trade billing has not applied yet, kept until it does."""

    lease_id: str
    buyer_id: str
    """The buyer the book names; the lease must be this buyer's when it opens."""
    offer_id: str
    seller_id: str
    interruption: Interruption


class Verdict(StrEnum):
    """What billing does with an interruption request, in order of precedence."""

    NOT_THE_BUYERS = "not_the_buyers"
    """The request names another buyer than the lease's: ignored (a bug of the sender)."""
    ENDED = "ended"
    """The lease ended meanwhile: nothing to interrupt (a normal race)."""
    INTERRUPTING = "interrupting"
    """The lease has an interruption already: the first one stands."""
    ON_DEMAND = "on_demand"
    """An on-demand lease is never interrupted (the book never asks)."""
    INTERRUPT = "interrupt"
    """A running interruptible lease: it ends at ``interrupt_at``."""


def verdict(lease: Lease, buyer_id: str) -> Verdict:
    """Whether an interruption of ``lease`` requested for ``buyer_id`` takes, or why not."""
    if lease.terms.buyer_id != buyer_id:
        return Verdict.NOT_THE_BUYERS
    if lease.state.ended:
        return Verdict.ENDED
    if lease.state.interruption is not None:
        return Verdict.INTERRUPTING
    if lease.tier != Tier.INTERRUPTIBLE.value:
        return Verdict.ON_DEMAND
    return Verdict.INTERRUPT


def interrupt(state: State, interruption: Interruption) -> State:
    """The lease's state once interrupted (it must not be ended or interrupted already)."""
    if state.ended or state.interruption is not None:
        raise ValueError("only a running lease without an interruption can be interrupted")
    return replace(state, interruption=interruption)


def notice_seconds(interruption: Interruption) -> int:
    """The whole seconds of notice: from when the book decided to ``interrupt_at``."""
    return whole_seconds(interruption.noticed_at, interruption.at)
