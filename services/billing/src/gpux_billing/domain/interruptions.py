"""Interruptions: whether the book's interruption of a lease takes, and its notice (pure).

The book interrupts a running interruptible lease at ``interrupt_at``, at least the offer's
notice ahead (an on-demand order takes its GPUs, or their seller reclaims them). Billing
keeps the interruption on the lease, once: from then on the lease is due at
``interrupt_at`` at the latest, and settlement ends it there with ``interrupted``, charged
exactly to that instant (``domain.leases.settle``). Anything else is ignored: a lease that
ended meanwhile (a stop, its funds, its fixed length), one interrupted already, one of
another buyer, and an on-demand lease (never interruptible; the book never asks).
"""

from __future__ import annotations

from dataclasses import replace
from enum import StrEnum

from gpux_billing.domain.leases import Interruption, Lease, State, whole_seconds
from gpux_contracts.offers import Tier


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
