"""Sellers' offers: submit (as a command on Kafka), list and read their own."""

from typing import Annotated, Any

import asyncpg
from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import JSONResponse

from gpux_contracts.accounts import Role
from gpux_contracts.ids import new_id
from gpux_contracts.money import canonical, from_micros
from gpux_contracts.offers import (
    OfferChangeRequested,
    OfferSubmitted,
    OfferWithdrawalRequested,
)
from gpux_contracts.topics import OFFERS_COMMANDS
from gpux_gateway.adapters import repository
from gpux_gateway.api.auth import account_id_for, principal_dependency
from gpux_gateway.api.common import command_id, create_once, envelope
from gpux_gateway.api.schemas import (
    Cursor,
    OfferBatchIn,
    OfferBatchOut,
    OfferChange,
    OfferIn,
    OfferOut,
    Page,
    ResourceId,
)
from gpux_gateway.context import Gateway
from gpux_gateway.domain.access import Principal, Scope
from gpux_gateway.domain.windows import check_window
from gpux_gateway.idempotency import IdemKey, check_key
from gpux_platform.broker import Outgoing
from gpux_platform.outbox import add as add_to_outbox
from gpux_platform.problems import ProblemError

CLOSED = {"rejected", "withdrawn", "exhausted", "expired"}


def offer_out(row: asyncpg.Record) -> OfferOut:
    """The seller's view of a stored offer."""
    return OfferOut(
        id=row["id"],
        gpu=row["gpu"],
        gpus=row["gpus"],
        remaining_gpus=row["remaining_gpus"],
        price_per_gpu_hour=canonical(from_micros(row["price_micros"])),
        currency=row["currency"],
        tier=row["tier"],
        billing=row["billing"],
        region=row["region"],
        min_hours=row["min_hours"],
        available_until=row["available_until"],
        status=row["status"],
        reason=row["reason"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
    )


def router(gw: Gateway) -> APIRouter:
    """Routes under /v1/offers."""
    api = APIRouter(prefix="/v1/offers", tags=["offers"])
    principal = principal_dependency(gw)

    @api.post("", status_code=202, response_model=OfferOut, summary="Offer GPUs (sellers)")
    async def submit(
        body: OfferIn,
        request: Request,
        who: Annotated[Principal, Depends(principal)],
        idempotency_key: IdemKey = None,
    ) -> JSONResponse:
        seller_id = account_id_for(who, Scope.OFFERS_WRITE, Role.SELLER)
        idem = check_key(idempotency_key)
        problem = check_window(body.available_until, gw.clock.now())
        if problem:
            raise ProblemError(422, "validation-error", "Request validation failed", problem)

        async def create(conn: asyncpg.Connection) -> tuple[int, dict[str, Any]]:
            row = await _submit(conn, seller_id, body, command_id(seller_id, idem, "offer"))
            return 202, offer_out(row).model_dump(mode="json")

        return await create_once(gw, request, scope=seller_id, key=idem, body=body, create=create)

    @api.post(
        "/bulk",
        status_code=202,
        response_model=OfferBatchOut,
        summary="Offer many GPUs at once (sellers): all or none",
    )
    async def submit_many(
        body: OfferBatchIn,
        request: Request,
        who: Annotated[Principal, Depends(principal)],
        idempotency_key: IdemKey = None,
    ) -> JSONResponse:
        seller_id = account_id_for(who, Scope.OFFERS_WRITE, Role.SELLER)
        idem = check_key(idempotency_key)
        now = gw.clock.now()
        for position, offer in enumerate(body.offers):
            problem = check_window(offer.available_until, now)
            if problem:
                raise ProblemError(
                    422,
                    "validation-error",
                    "Request validation failed",
                    f"offers.{position}.{problem}",
                )

        async def create(conn: asyncpg.Connection) -> tuple[int, dict[str, Any]]:
            rows = [
                await _submit(conn, seller_id, offer, command_id(seller_id, idem, f"offer.{i}"))
                for i, offer in enumerate(body.offers)
            ]
            out = OfferBatchOut(items=[offer_out(row) for row in rows])
            return 202, out.model_dump(mode="json")

        return await create_once(gw, request, scope=seller_id, key=idem, body=body, create=create)

    async def _submit(
        conn: asyncpg.Connection, seller_id: str, body: OfferIn, event_id: str
    ) -> asyncpg.Record:
        """Store one offer and its command, in the caller's transaction."""
        command = OfferSubmitted(offer_id=new_id(), seller_id=seller_id, **body.model_dump())
        await repository.insert_offer(conn, command, gw.clock.now())
        message = Outgoing(OFFERS_COMMANDS, command.gpu, envelope(gw, command, event_id))
        await add_to_outbox(conn, "gateway", [message])
        row = await repository.get_offer(conn, seller_id, command.offer_id)
        assert row is not None
        return row

    async def _own_open_offer(seller_id: str, offer_id: str) -> asyncpg.Record:
        row = await repository.get_offer(gw.pool, seller_id, offer_id)
        if row is None:
            raise ProblemError(404, "not-found", "Not found", "no such offer")
        if row["status"] in CLOSED:
            raise ProblemError(409, "offer-closed", "Offer closed", f"the offer is {row['status']}")
        return row

    async def _command(row: asyncpg.Record, payload: Any) -> None:
        async with gw.pool.acquire() as conn, conn.transaction():
            message = Outgoing(OFFERS_COMMANDS, row["gpu"], envelope(gw, payload, new_id()))
            await add_to_outbox(conn, "gateway", [message])

    @api.patch(
        "/{offer_id}", status_code=202, response_model=OfferOut, summary="Re-price or resize"
    )
    async def change(
        offer_id: ResourceId, body: OfferChange, who: Annotated[Principal, Depends(principal)]
    ) -> OfferOut:
        seller_id = account_id_for(who, Scope.OFFERS_WRITE, Role.SELLER)
        if body.price_per_gpu_hour is None and body.gpus is None:
            raise ProblemError(
                422, "validation-error", "Request validation failed", "change price or gpus"
            )
        row = await _own_open_offer(seller_id, offer_id)
        command = OfferChangeRequested(
            offer_id=offer_id,
            seller_id=seller_id,
            gpu=row["gpu"],
            price_per_gpu_hour=body.price_per_gpu_hour,
            gpus=body.gpus,
        )
        await _command(row, command)
        return offer_out(row)

    @api.delete("/{offer_id}", status_code=202, response_model=OfferOut, summary="Withdraw")
    async def withdraw(
        offer_id: ResourceId, who: Annotated[Principal, Depends(principal)]
    ) -> OfferOut:
        seller_id = account_id_for(who, Scope.OFFERS_WRITE, Role.SELLER)
        row = await _own_open_offer(seller_id, offer_id)
        command = OfferWithdrawalRequested(offer_id=offer_id, seller_id=seller_id, gpu=row["gpu"])
        await _command(row, command)
        return offer_out(row)

    @api.get("", response_model=Page[OfferOut], summary="The seller's offers")
    async def list_offers(
        who: Annotated[Principal, Depends(principal)],
        limit: Annotated[int, Query(ge=1, le=100)] = 50,
        cursor: Cursor = None,
    ) -> Page[OfferOut]:
        seller_id = account_id_for(who, Scope.READ, Role.SELLER)
        rows = await repository.list_offers(gw.pool, seller_id, cursor, limit + 1)
        items = [offer_out(r) for r in rows[:limit]]
        next_cursor = items[-1].id if len(rows) > limit else None
        return Page[OfferOut](items=items, next_cursor=next_cursor)

    @api.get("/{offer_id}", response_model=OfferOut, summary="One of the seller's offers")
    async def get_offer(
        offer_id: ResourceId, who: Annotated[Principal, Depends(principal)]
    ) -> OfferOut:
        seller_id = account_id_for(who, Scope.READ, Role.SELLER)
        row = await repository.get_offer(gw.pool, seller_id, offer_id)
        if row is None:
            raise ProblemError(404, "not-found", "Not found", "no such offer")
        return offer_out(row)

    return api
