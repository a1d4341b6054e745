"""Sellers' offers: submitted (one or many, all or none), changed and withdrawn as commands on
``offers.commands``; each seller sees only its own."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from gpux_contracts.events import Payload
from gpux_contracts.ids import new_id
from gpux_contracts.offers import OfferChangeRequested, OfferSubmitted, OfferWithdrawalRequested
from gpux_contracts.topics import OFFERS_COMMANDS
from gpux_gateway.domain.idempotency import Once, Outcome
from gpux_gateway.domain.offers import (
    change_problem,
    interruptible_price_problem,
    is_closed,
    provisioning_timeout_problem,
)
from gpux_gateway.domain.windows import window_problem
from gpux_gateway.entrypoints.schemas import Page, field_error, id_page
from gpux_gateway.offers.repository import OfferRow
from gpux_gateway.offers.schemas import (
    OfferBatchIn,
    OfferBatchOut,
    OfferChange,
    OfferIn,
    OfferOut,
    offer_out,
)
from gpux_gateway.reliability.repository import SellerReliability
from gpux_gateway.service.access import found
from gpux_gateway.service.commands import command_id, send
from gpux_gateway.service.idempotency import run_once
from gpux_gateway.service.unit_of_work import GatewayUnitOfWork
from gpux_platform.problems import ProblemError


async def _submit(
    uow: GatewayUnitOfWork, seller_id: str, offer: OfferIn, event_id: str
) -> OfferRow:
    """Store one offer and queue its command, in the unit of work."""
    command = OfferSubmitted(offer_id=new_id(), seller_id=seller_id, **offer.model_dump())
    row = await uow.offers.add(command, uow.now)
    send(uow, OFFERS_COMMANDS, command.gpu, command, event_id)
    return row


async def _record(
    uow: GatewayUnitOfWork, seller_id: str, rows: Sequence[OfferRow]
) -> SellerReliability:
    """The seller's reliability and that of the offers ``rows`` are (one read)."""
    return await uow.reliability.of_seller(seller_id, [row.id for row in rows])


async def _out(uow: GatewayUnitOfWork, row: OfferRow) -> OfferOut:
    """One offer as its seller sees it, with its reliability and the seller's."""
    return offer_out(row, await _record(uow, row.seller_id, [row]))


def _check(offer: OfferIn, at: tuple[str | int, ...], now: datetime) -> None:
    """Refuse, as a 422 naming the field under ``at``, what no schema states of an offer: its
    window (``domain.windows``), its interruptible price and its provisioning timeout
    (``domain.offers``)."""
    problem = window_problem(offer.available_until, now)
    if problem:
        raise field_error((*at, "available_until"), problem)
    problem = interruptible_price_problem(
        offer.tier, offer.price_per_gpu_hour, offer.interruptible_price_per_gpu_hour
    )
    if problem:
        raise field_error((*at, "interruptible_price_per_gpu_hour"), problem)
    problem = provisioning_timeout_problem(offer.provisioning_timeout_seconds)
    if problem:
        raise field_error((*at, "provisioning_timeout_seconds"), problem)


async def submit(uow: GatewayUnitOfWork, *, seller_id: str, offer: OfferIn, once: Once) -> Outcome:
    """Submit one offer (status pending until pricing decides), once per Idempotency-Key."""
    _check(offer, ("body",), uow.now)

    async def make() -> tuple[int, dict[str, Any]]:
        row = await _submit(uow, seller_id, offer, command_id(seller_id, once.key, "offer"))
        return 202, (await _out(uow, row)).model_dump(mode="json")

    return await run_once(uow, once, make)


async def submit_many(
    uow: GatewayUnitOfWork, *, seller_id: str, batch: OfferBatchIn, once: Once
) -> Outcome:
    """Submit many offers together: one bad offer refuses them all."""
    for position, offer in enumerate(batch.offers):
        _check(offer, ("body", "offers", position), uow.now)

    async def make() -> tuple[int, dict[str, Any]]:
        rows = [
            await _submit(uow, seller_id, offer, command_id(seller_id, once.key, f"offer.{i}"))
            for i, offer in enumerate(batch.offers)
        ]
        record = await _record(uow, seller_id, rows)
        out = OfferBatchOut(items=[offer_out(row, record) for row in rows])
        return 202, out.model_dump(mode="json")

    return await run_once(uow, once, make)


async def _own_offer(uow: GatewayUnitOfWork, seller_id: str, offer_id: str) -> OfferRow:
    return found(await uow.offers.get(seller_id, offer_id), "offer")


async def _own_open_offer(uow: GatewayUnitOfWork, seller_id: str, offer_id: str) -> OfferRow:
    row = await _own_offer(uow, seller_id, offer_id)
    if is_closed(row.status):
        raise ProblemError(409, "offer-closed", "Offer closed", f"the offer is {row.status}")
    return row


def _command(uow: GatewayUnitOfWork, row: OfferRow, payload: Payload) -> None:
    send(uow, OFFERS_COMMANDS, row.gpu, payload, new_id())


async def change(
    uow: GatewayUnitOfWork, *, seller_id: str, offer_id: str, body: OfferChange
) -> OfferOut:
    """Ask pricing to re-price or resize an open offer; answers the offer as it stands.

    A new interruptible price is for an on-demand offer only, and at most the on-demand price
    when the same change sets that too (else pricing checks it against the price it holds).
    """
    interruptible = body.interruptible_price_per_gpu_hour
    problem = change_problem(body.price_per_gpu_hour, body.gpus, interruptible)
    if problem:
        raise field_error(("body",), problem)
    row = await _own_open_offer(uow, seller_id, offer_id)
    problem = interruptible_price_problem(row.tier, body.price_per_gpu_hour, interruptible)
    if problem:
        raise field_error(("body", "interruptible_price_per_gpu_hour"), problem)
    command = OfferChangeRequested(
        offer_id=offer_id,
        seller_id=seller_id,
        gpu=row.gpu,
        price_per_gpu_hour=body.price_per_gpu_hour,
        gpus=body.gpus,
        interruptible_price_per_gpu_hour=interruptible,
    )
    _command(uow, row, command)
    return await _out(uow, row)


async def withdraw(uow: GatewayUnitOfWork, *, seller_id: str, offer_id: str) -> OfferOut:
    """Ask for an open offer to leave the book; answers the offer as it stands."""
    row = await _own_open_offer(uow, seller_id, offer_id)
    _command(
        uow, row, OfferWithdrawalRequested(offer_id=offer_id, seller_id=seller_id, gpu=row.gpu)
    )
    return await _out(uow, row)


async def page(
    uow: GatewayUnitOfWork, seller_id: str, *, limit: int, cursor: str | None
) -> Page[OfferOut]:
    """A page of the seller's offers, in id order, each with its reliability and the seller's."""
    rows = await uow.offers.page(seller_id, cursor, limit + 1)
    record = await _record(uow, seller_id, rows)
    return id_page(rows, limit, lambda row: offer_out(row, record))


async def get(uow: GatewayUnitOfWork, seller_id: str, offer_id: str) -> OfferOut:
    """One of the seller's offers; 404 for any other."""
    return await _out(uow, await _own_offer(uow, seller_id, offer_id))
