"""Pricing's handlers: each runs in one transaction with its inbox claim and outbox writes."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any

import asyncpg

from gpux_contracts.accounts import AccountChanged, AccountStatus, Role
from gpux_contracts.catalog import GpuPublished
from gpux_contracts.events import Envelope, Payload, wrap
from gpux_contracts.fx import RatePublished
from gpux_contracts.ids import stable_id
from gpux_contracts.money import Currency
from gpux_contracts.offers import (
    OfferAccepted,
    OfferChangeRequested,
    OfferStatus,
    OfferStatusChanged,
    OfferSubmitted,
    OfferWithdrawalRequested,
    OfferWithdrawn,
)
from gpux_contracts.prices import BestAskChanged
from gpux_contracts.topics import OFFERS_STATUS, PRICING_BEST_ASKS, PRICING_OFFERS, Topic
from gpux_platform import outbox
from gpux_platform.broker import Outgoing
from gpux_pricing import market_data
from gpux_pricing.adapters import repository
from gpux_pricing.domain.fx import REFERENCE, FxError, Rate
from gpux_pricing.domain.validation import Band, OfferFacts, Rejection, SellerView, check_offer

SCHEMA = "pricing"
PRODUCER = "pricing"
TERMINAL = {OfferStatus.REJECTED, OfferStatus.WITHDRAWN, OfferStatus.EXHAUSTED, OfferStatus.EXPIRED}
# The gateway only sends commands for authenticated, active sellers. An account pricing has
# not heard of yet (its event is still on the way) is therefore taken as an active seller.
TRUSTED_NEW_SELLER = SellerView(AccountStatus.ACTIVE, True)


def _out(
    topic: Topic, key: str, payload: Payload, cause: Envelope[Any], tag: str, now: datetime
) -> Outgoing:
    # Derived ids: handling the same command twice (a crash before commit) emits the same events.
    event_id = stable_id(cause.event_id, tag)
    envelope = wrap(
        payload,
        producer=PRODUCER,
        occurred_at=now,
        event_id=event_id,
        correlation_id=cause.correlation_id,
        causation_id=cause.event_id,
        trace=cause.trace,
    )
    return Outgoing(topic, key, envelope)


async def on_account_changed(conn: asyncpg.Connection, event: Envelope[AccountChanged]) -> None:
    """Remember whether an account may sell."""
    account = event.payload
    await repository.upsert_seller(
        conn, account.account_id, account.status, Role.SELLER in account.roles
    )


async def on_gpu_published(conn: asyncpg.Connection, event: Envelope[GpuPublished]) -> None:
    """Remember a GPU model of the catalog."""
    await repository.upsert_gpu(conn, event.payload.id, event.payload.name)


async def on_rate_published(conn: asyncpg.Connection, event: Envelope[RatePublished]) -> None:
    """Keep the newest FX rate per currency."""
    rate = event.payload
    await repository.upsert_rate(conn, Rate(rate.base, rate.quote, rate.rate, rate.as_of))


async def _verdict(
    conn: asyncpg.Connection, offer: OfferSubmitted, band: Band, now: datetime
) -> Rejection | None:
    seller = await repository.seller(conn, offer.seller_id) or TRUSTED_NEW_SELLER
    known = await repository.gpu_known(conn, offer.gpu)
    rates = await repository.rate_table(conn)
    try:
        reference: Decimal | None = rates.convert(
            offer.price_per_gpu_hour, Currency(offer.currency), REFERENCE, now
        )
    except FxError:
        reference = None
    facts = OfferFacts(
        offer.seller_id,
        offer.gpu,
        offer.price_per_gpu_hour,
        offer.currency.value,
        offer.available_until,
    )
    return check_offer(
        facts,
        sellers={offer.seller_id: seller},
        gpus={offer.gpu: band} if known else {},
        reference_price=reference,
        now=now,
    )


async def _decide(
    conn: asyncpg.Connection,
    offer: OfferSubmitted,
    revision: int,
    cause: Envelope[Any],
    band: Band,
    now: datetime,
) -> None:
    reason = await _verdict(conn, offer, band, now)
    status = OfferStatus.ACCEPTED if reason is None else OfferStatus.REJECTED
    if revision > 1 and reason is not None:
        # A refused change leaves the accepted offer as it was; the seller sees why.
        await _status(conn, offer, OfferStatus.ACCEPTED, reason.value, cause, now, "change-refused")
        return
    await repository.save_offer(conn, offer, revision, status, reason and reason.value, now)
    messages = [_status_message(offer, status, reason and reason.value, cause, now, "status")]
    if reason is None:
        accepted = OfferAccepted(offer=offer, revision=revision)
        messages.append(_out(PRICING_OFFERS, offer.gpu, accepted, cause, "accepted", now))
    await outbox.add(conn, SCHEMA, messages)


def _status_message(
    offer: OfferSubmitted,
    status: OfferStatus,
    reason: str | None,
    cause: Envelope[Any],
    now: datetime,
    tag: str,
) -> Outgoing:
    payload = OfferStatusChanged(
        offer_id=offer.offer_id,
        seller_id=offer.seller_id,
        gpu=offer.gpu,
        status=status,
        remaining_gpus=offer.gpus if status is OfferStatus.ACCEPTED else 0,
        reason=reason,
    )
    return _out(OFFERS_STATUS, offer.gpu, payload, cause, tag, now)


async def _status(
    conn: asyncpg.Connection,
    offer: OfferSubmitted,
    status: OfferStatus,
    reason: str | None,
    cause: Envelope[Any],
    now: datetime,
    tag: str,
) -> None:
    await outbox.add(conn, SCHEMA, [_status_message(offer, status, reason, cause, now, tag)])


async def on_offer_submitted(
    conn: asyncpg.Connection, event: Envelope[OfferSubmitted], band: Band, now: datetime
) -> None:
    """Validate a new offer: accepted ones go to the book, refused ones back to the seller."""
    if await repository.offer(conn, event.payload.offer_id) is not None:
        return  # the same offer id again (a different command id): already decided
    await _decide(conn, event.payload, 1, event, band, now)


async def on_offer_change_requested(
    conn: asyncpg.Connection, event: Envelope[OfferChangeRequested], band: Band, now: datetime
) -> None:
    """Validate a re-price or a new GPU count of a live offer."""
    change = event.payload
    known = await repository.offer(conn, change.offer_id)
    if known is None or known[0].seller_id != change.seller_id or known[2] in TERMINAL:
        return  # the gateway only forwards changes of its sellers' open offers
    current, revision, _ = known
    updates: dict[str, Any] = {}
    if change.price_per_gpu_hour is not None:
        updates["price_per_gpu_hour"] = change.price_per_gpu_hour
    if change.gpus is not None:
        updates["gpus"] = change.gpus
    await _decide(conn, current.model_copy(update=updates), revision + 1, event, band, now)


async def on_book_status(
    conn: asyncpg.Connection, event: Envelope[OfferStatusChanged], now: datetime
) -> list[BestAskChanged]:
    """Mirror what the book says of an offer; returns the new quotes of its book."""
    if event.producer == PRODUCER:
        return []  # pricing's own decisions on the same topic
    change = event.payload
    book = await repository.set_book_state(
        conn, change.offer_id, change.status, change.remaining_gpus, now
    )
    if book is None:
        return []
    quotes = await market_data.book_quotes(conn, *book, now)
    messages = [
        _out(PRICING_BEST_ASKS, market_data.quote_key(q), q, event, market_data.quote_key(q), now)
        for q in quotes
    ]
    await outbox.add(conn, SCHEMA, messages)
    return quotes


async def on_offer_withdrawal_requested(
    conn: asyncpg.Connection, event: Envelope[OfferWithdrawalRequested], now: datetime
) -> None:
    """Forward a withdrawal to the book (the book confirms it with a status)."""
    request = event.payload
    known = await repository.offer(conn, request.offer_id)
    if known is None or known[0].seller_id != request.seller_id or known[2] in TERMINAL:
        return
    withdrawn = OfferWithdrawn(
        offer_id=request.offer_id, seller_id=request.seller_id, gpu=request.gpu
    )
    await outbox.add(
        conn, SCHEMA, [_out(PRICING_OFFERS, request.gpu, withdrawn, event, "withdrawn", now)]
    )
