"""Sellers' offers on the book: accepted by pricing (new or changed), or withdrawn.

Revision 1 of an accepted offer adds it to the book, with its interruptible price and notice
when it has them; a later revision changes its price, capacity or interruptible price (an
older one than the book holds changes nothing). An exhausted offer stays on the book (its
GPUs come back as leases end), so a change reaches it too. A withdrawal takes an offer that
is on the book off it.
"""

from __future__ import annotations

from decimal import Decimal

from gpux_contracts.events import Envelope
from gpux_contracts.money import to_micros
from gpux_contracts.offers import OfferAccepted, OfferSubmitted, OfferWithdrawn
from gpux_matching.domain import AddOffer, ChangeOffer, Command, WithdrawOffer, epoch_micros
from gpux_matching.service.partition import execute
from gpux_matching.service.unit_of_work import BookUnitOfWork


async def on_accepted(uow: BookUnitOfWork, event: Envelope[OfferAccepted]) -> None:
    """Add the offer (revision 1) or change it (a later revision than the book holds)."""
    command = await _plan_accepted(uow, event.payload)
    if command is not None:
        execute(uow, command, event)


async def _plan_accepted(uow: BookUnitOfWork, accepted: OfferAccepted) -> Command | None:
    offer = accepted.offer
    now = uow.partition.now_micros()
    revision = await uow.offers.revision(offer.offer_id)
    price = to_micros(offer.price_per_gpu_hour)
    if accepted.revision == 1:
        if revision is not None:
            return None  # already given to the book
        await uow.offers.save(offer.offer_id, offer.seller_id, offer.gpu, 1)
        return add_command(offer, now)
    if revision is None or revision >= accepted.revision:
        return None  # unknown to the book, or an older revision than the one it holds
    await uow.offers.save(offer.offer_id, offer.seller_id, offer.gpu, accepted.revision)
    if uow.partition.engine.offer(offer.offer_id) is None:
        return None  # no longer on the book
    # Only what the change set: the book may have changed the capacity itself since (a
    # reclaimed lease's GPUs left the offer), and a re-price must not undo that.
    changed = accepted.changed
    return ChangeOffer(
        now=now,
        offer_id=offer.offer_id,
        price_micros=price,
        gpus=offer.gpus if changed is None or "gpus" in changed else None,
        interruptible_price_micros=_micros(offer.interruptible_price_per_gpu_hour),
    )


def _micros(amount: Decimal | None) -> int | None:
    return None if amount is None else to_micros(amount)


def add_command(offer: OfferSubmitted, now: int) -> AddOffer:
    """The engine command that puts a new offer on the book (``now`` in epoch microseconds)."""
    return AddOffer(
        now=now,
        offer_id=offer.offer_id,
        seller_id=offer.seller_id,
        gpu=offer.gpu,
        tier=str(offer.tier),
        price_micros=to_micros(offer.price_per_gpu_hour),
        currency=str(offer.currency),
        gpus=offer.gpus,
        billing=str(offer.billing),
        region=offer.region,
        min_hours=offer.min_hours,
        available_until=(
            None if offer.available_until is None else epoch_micros(offer.available_until)
        ),
        interruptible_price_micros=_micros(offer.interruptible_price_per_gpu_hour),
        notice_s=offer.interruption_notice_seconds,
        provisioning_s=offer.provisioning_timeout_seconds,
    )


async def on_withdrawn(uow: BookUnitOfWork, event: Envelope[OfferWithdrawn]) -> None:
    """Withdraw an offer that is on the book."""
    offer_id = event.payload.offer_id
    if uow.partition.engine.offer(offer_id) is not None:
        execute(uow, WithdrawOffer(now=uow.partition.now_micros(), offer_id=offer_id), event)
