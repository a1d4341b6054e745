"""Capacity: leases give their offer's GPUs back, and interruptible leases are interrupted.

An offer is a pool of GPUs over a time window; a lease holds some of them from its start to
its end. Four events keep the book's view of each pool true:

- ``lease.released`` (billing -> the book, on ``capacity.commands``, key: GPU id): a lease
  ended, for whatever reason; its GPUs are free again (or go to the on-demand leases that
  preempted it).
- ``lease.reclaim_requested`` (gateway -> the book, same topic): the seller of an
  interruptible lease's offer wants those GPUs back.
- ``lease.interruption_requested`` (the book -> billing, on ``billing.commands``, key: buyer
  id): the book decided to interrupt an interruptible lease at ``interrupt_at``, at least the
  offer's notice away, because an on-demand order preempted it or its seller reclaimed it.
- ``lease.interruption_notice`` (billing -> everyone, on ``billing.leases``, key: lease id):
  the lease will end at ``interrupt_at``; billing charges it exactly to that instant and
  releases the unused prepayment.
"""

from __future__ import annotations

from enum import StrEnum
from typing import ClassVar

from pydantic import AwareDatetime, Field

from gpux_contracts.events import Payload
from gpux_contracts.leases import LeaseEndReason, LeaseKey
from gpux_contracts.offers import OfferKey, Tier


class InterruptionCause(StrEnum):
    """Why an interruptible lease is interrupted."""

    PREEMPTED = "preempted"
    """An on-demand order found no free capacity within its limit and takes these GPUs."""
    RECLAIMED = "reclaimed"
    """The offer's seller takes these GPUs back (the offer's capacity shrinks by them)."""


class LeaseReleased(Payload):
    """A lease ended: its GPUs go back to its offer at once (billing -> the book)."""

    event_type: ClassVar[str] = "lease.released"
    schema_version: ClassVar[int] = 1

    lease_id: str
    offer_id: str
    gpu: str = Field(description="The record key: the book of this GPU model holds the offer.")
    gpus: int = Field(ge=1)
    tier: Tier
    reason: LeaseEndReason
    ended_at: AwareDatetime


# A lease on the book is named by both keys; pydantic orders fields from the last base on,
# so the lease's come first.
class LeaseReclaimRequested(Payload, OfferKey, LeaseKey):
    """The seller asked for an interruptible lease's GPUs back (gateway -> the book).

    ``buyer_id`` is the lease's buyer; the gateway checked that ``seller_id`` sells the
    offer and that the lease is interruptible and running.
    """

    event_type: ClassVar[str] = "lease.reclaim_requested"
    schema_version: ClassVar[int] = 1

    gpu: str = Field(description="The record key.")
    requested_at: AwareDatetime


class LeaseInterruptionRequested(Payload, OfferKey, LeaseKey):
    """The book interrupts an interruptible lease at ``interrupt_at`` (the book -> billing)."""

    event_type: ClassVar[str] = "lease.interruption_requested"
    schema_version: ClassVar[int] = 1

    gpus: int = Field(ge=1)
    cause: InterruptionCause
    noticed_at: AwareDatetime = Field(description="When the book decided.")
    interrupt_at: AwareDatetime = Field(
        description="When the lease ends: at least the offer's notice after `noticed_at`."
    )
    taken_by: list[str] = Field(
        default_factory=list,
        description="With `preempted`: the trades (on-demand leases) that get these GPUs at"
        " `interrupt_at`.",
    )


class LeaseInterruptionNoticed(Payload, LeaseKey):
    """An interruptible lease ends at ``interrupt_at`` (billing -> views, webhooks, buyers).

    Sent once per lease. Billing charges the lease exactly to ``interrupt_at`` (or to an
    earlier stop) and then ends it with ``interrupted``.
    """

    event_type: ClassVar[str] = "lease.interruption_notice"
    schema_version: ClassVar[int] = 1

    seller_id: str
    offer_id: str
    cause: InterruptionCause
    noticed_at: AwareDatetime
    interrupt_at: AwareDatetime
    notice_seconds: int = Field(ge=0, description="`interrupt_at` minus `noticed_at`.")
