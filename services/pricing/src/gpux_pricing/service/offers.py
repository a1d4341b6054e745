"""Sellers' offer commands: validated into offers for the book, or refused with a reason.

An accepted offer (or change) goes to ``pricing.offers`` for the book and its status to
``offers.status``; a refused one only its status, with the first reason that applies. A
change is checked as the offer would stand after it (``domain.validation``), and an exhausted
offer may still be changed or withdrawn: it is live again when a lease gives GPUs back.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any

from gpux_contracts.accounts import AccountStatus
from gpux_contracts.events import Envelope
from gpux_contracts.money import REFERENCE_CURRENCY, Currency
from gpux_contracts.offers import (
    OfferAccepted,
    OfferChangeRequested,
    OfferStatus,
    OfferStatusChanged,
    OfferSubmitted,
    OfferWithdrawalRequested,
    OfferWithdrawn,
)
from gpux_contracts.topics import OFFERS_STATUS, PRICING_OFFERS
from gpux_platform.broker import Outgoing
from gpux_pricing.domain.fx import FxError, RateTable
from gpux_pricing.domain.validation import OfferFacts, Rejection, SellerView, check_offer
from gpux_pricing.service.outgoing import message
from gpux_pricing.service.unit_of_work import Decision, KnownOffer, PricingUnitOfWork

CLOSED = {OfferStatus.REJECTED, OfferStatus.WITHDRAWN, OfferStatus.EXPIRED}
"""Statuses after which an offer never changes again (exhausted is not one of them)."""
# The gateway only sends commands for authenticated, active sellers. An account pricing has
# not heard of yet (its event is still on the way) is therefore taken as an active seller.
TRUSTED_NEW_SELLER = SellerView(AccountStatus.ACTIVE, True)


async def on_submitted(uow: PricingUnitOfWork, event: Envelope[OfferSubmitted]) -> None:
    """Validate a new offer: accepted ones go to the book, refused ones back to the seller."""
    if await uow.offers.get(event.payload.offer_id) is not None:
        return  # the same offer id again (a different command id): already decided
    await _decide(uow, event.payload, 1, event)


async def on_change_requested(
    uow: PricingUnitOfWork, event: Envelope[OfferChangeRequested]
) -> None:
    """Validate a re-price, a new interruptible price or a new GPU count of an open offer."""
    change = event.payload
    known = await _open_offer_of(uow, change.offer_id, change.seller_id)
    if known is None:
        return  # the gateway only forwards changes of its sellers' open offers
    updates: dict[str, Any] = {}
    if change.price_per_gpu_hour is not None:
        updates["price_per_gpu_hour"] = change.price_per_gpu_hour
    if change.gpus is not None:
        updates["gpus"] = change.gpus
    if change.interruptible_price_per_gpu_hour is not None:
        updates["interruptible_price_per_gpu_hour"] = change.interruptible_price_per_gpu_hour
    changed = sorted(updates)
    await _decide(uow, known.offer.model_copy(update=updates), known.revision + 1, event, changed)


async def on_withdrawal_requested(
    uow: PricingUnitOfWork, event: Envelope[OfferWithdrawalRequested]
) -> None:
    """Forward a withdrawal to the book (the book confirms it with a status)."""
    request = event.payload
    if await _open_offer_of(uow, request.offer_id, request.seller_id) is None:
        return
    withdrawn = OfferWithdrawn(
        offer_id=request.offer_id, seller_id=request.seller_id, gpu=request.gpu
    )
    now = uow.now()
    uow.outbox.add(message(PRICING_OFFERS, request.gpu, withdrawn, event, tag="withdrawn", now=now))


async def _open_offer_of(
    uow: PricingUnitOfWork, offer_id: str, seller_id: str
) -> KnownOffer | None:
    known = await uow.offers.get(offer_id)
    if known is None or known.offer.seller_id != seller_id or known.status in CLOSED:
        return None
    return known


def _in_reference(
    price: Decimal | None, currency: Currency, rates: RateTable, now: datetime
) -> Decimal | None:
    if price is None:
        return None
    try:
        return rates.convert(price, currency, REFERENCE_CURRENCY, now)
    except FxError:
        return None


async def _verdict(
    uow: PricingUnitOfWork, offer: OfferSubmitted, now: datetime
) -> Rejection | None:
    seller = await uow.sellers.get(offer.seller_id) or TRUSTED_NEW_SELLER
    known = await uow.gpus.known(offer.gpu)
    rates = await uow.rates.table()
    currency = Currency(offer.currency)
    interruptible = offer.interruptible_price_per_gpu_hour
    facts = OfferFacts(
        offer.seller_id,
        offer.gpu,
        offer.price_per_gpu_hour,
        offer.currency.value,
        offer.available_until,
        offer.tier,
        interruptible,
    )
    return check_offer(
        facts,
        sellers={offer.seller_id: seller},
        gpus={offer.gpu: uow.band_for(offer.gpu)} if known else {},
        reference_price=_in_reference(offer.price_per_gpu_hour, currency, rates, now),
        interruptible_reference_price=_in_reference(interruptible, currency, rates, now),
        now=now,
    )


async def _decide(
    uow: PricingUnitOfWork,
    offer: OfferSubmitted,
    revision: int,
    cause: Envelope[Any],
    changed: list[str] | None = None,
) -> None:
    now = uow.now()
    reason = await _verdict(uow, offer, now)
    if revision > 1 and reason is not None:
        # A refused change leaves the accepted offer as it was; the seller sees why.
        uow.outbox.add(
            _status(offer, OfferStatus.ACCEPTED, reason.value, cause, tag="change-refused", now=now)
        )
        return
    status = OfferStatus.ACCEPTED if reason is None else OfferStatus.REJECTED
    why = None if reason is None else reason.value
    await uow.offers.save(offer, Decision(revision, status, why), now)
    uow.outbox.add(_status(offer, status, why, cause, tag="status", now=now))
    if reason is None:
        accepted = OfferAccepted(offer=offer, revision=revision, changed=changed)
        uow.outbox.add(message(PRICING_OFFERS, offer.gpu, accepted, cause, tag="accepted", now=now))


def _status(
    offer: OfferSubmitted,
    status: OfferStatus,
    reason: str | None,
    cause: Envelope[Any],
    *,
    tag: str,
    now: datetime,
) -> Outgoing:
    payload = OfferStatusChanged(
        offer_id=offer.offer_id,
        seller_id=offer.seller_id,
        gpu=offer.gpu,
        status=status,
        remaining_gpus=offer.gpus if status is OfferStatus.ACCEPTED else 0,
        reason=reason,
    )
    return message(OFFERS_STATUS, offer.gpu, payload, cause, tag=tag, now=now)
