"""Reliability: billing counts the lease outcomes that tell whether a seller delivers, and
announces each changed offer's counts (``reliability.changed`` on billing.reliability, key:
the offer id).

Handlers stage an outcome where they decide it (``stage``, pure rules in
``domain.reliability``): a ready report that makes a provisioning lease ready
(``service.provisioning``), a trade's provisioning lease that opens ready because its
seller's report came first (``service.leases``; a lease without a provisioning timeout is not
measured), a settlement step that ends a lease ``failed`` (``service.settlement``, every
path), an interruption of cause ``reclaimed`` that takes (``service.interruptions``). The
unit's commit counts them all at once (``write``, from ``service.flush``: one
``Reliability.count`` for the whole unit, however many leases its trades opened), each lease
at most once per kind, and queues one ``reliability.changed`` per offer whose counts changed,
with the offer's counts and its seller's over all its offers as this unit reads them, in the
trace of the event that decided the offer's outcome counted last. Its id is stable per offer
and total (counts only grow: each change of an offer is a new total), so a unit repeated
after a crash names the same event.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from gpux_billing.domain.reliability import Counted, Kind, Outcome, distinct
from gpux_billing.service.events import outgoing
from gpux_billing.service.unit_of_work import BillingUnitOfWork
from gpux_contracts.events import Envelope
from gpux_contracts.ids import stable_id
from gpux_contracts.reliability import ReliabilityChanged
from gpux_contracts.topics import BILLING_RELIABILITY
from gpux_platform.broker import Outgoing

Cause = Envelope[Any] | None


def stage(uow: BillingUnitOfWork, outcomes: Iterable[Outcome | None], cause: Cause) -> None:
    """Stage outcomes to count when the unit commits, each with the event that decided it
    (None: billing's own timer)."""
    uow.staged.outcomes += [(o, cause) for o in outcomes if o is not None]


def _changed(uow: BillingUnitOfWork, counted: Counted, last: Outcome, cause: Cause) -> Outgoing:
    """The ``reliability.changed`` of an offer whose outcome ``last`` was counted last."""
    offer = counted.offers[last.offer_id]
    payload = ReliabilityChanged(
        seller_id=last.seller_id,
        offer_id=last.offer_id,
        offer=offer,
        seller=counted.sellers[last.seller_id],
        lease_id=last.lease_id,
        as_of=uow.now,
    )
    event_id = stable_id("reliability", last.offer_id, str(offer.total))
    return outgoing(
        BILLING_RELIABILITY, last.offer_id, payload, cause=cause, event_id=event_id, now=uow.now
    )


async def write(uow: BillingUnitOfWork, outcomes: Sequence[tuple[Outcome, Cause]]) -> None:
    """Count the unit's outcomes (one ``count``) and announce every offer they changed."""
    if not outcomes:
        return
    causes: dict[tuple[str, Kind], Cause] = {}
    for outcome, cause in outcomes:
        causes.setdefault(outcome.key, cause)  # the first of a lease and kind is the one counted
    counted = await uow.reliability.count(distinct(o for o, _ in outcomes), uow.now)
    uow.outbox.add(
        *(_changed(uow, counted, last, causes[last.key]) for last in counted.last().values())
    )
