"""Routes under /v1/offers: sellers submit, change, withdraw, list and read their offers."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from gpux_contracts.accounts import Role
from gpux_gateway.domain.access import Scope
from gpux_gateway.entrypoints.dependencies import (
    WRITE_ROUTE,
    PrincipalDep,
    UnitOfWorkDep,
    write_route,
)
from gpux_gateway.entrypoints.idempotency import IdempotencyDep
from gpux_gateway.entrypoints.schemas import Page, PageQueryDep, ResourceId
from gpux_gateway.offers import service
from gpux_gateway.offers.schemas import (
    OfferBatchIn,
    OfferBatchOut,
    OfferChange,
    OfferIn,
    OfferOut,
)
from gpux_gateway.service.access import account_id_for

router = APIRouter(prefix="/v1/offers", tags=["offers"])
CLOSED = (409, "The offer was rejected, withdrawn or expired (`/problems/offer-closed`)")


@router.post(
    "",
    **WRITE_ROUTE,
    response_model=OfferOut,
    summary="Offer GPUs (sellers)",
)
async def submit_offer(
    *,
    body: OfferIn,
    who: PrincipalDep,
    uow: UnitOfWorkDep,
    idem: IdempotencyDep,
) -> JSONResponse:
    seller_id = account_id_for(who, Scope.OFFERS_WRITE, Role.SELLER)
    once = idem.once(body, scope=seller_id)
    return idem.answer(await service.submit(uow, seller_id=seller_id, offer=body, once=once))


@router.post(
    "/bulk",
    **WRITE_ROUTE,
    response_model=OfferBatchOut,
    summary="Offer many GPUs at once (sellers): all or none",
)
async def submit_offers(
    *,
    body: OfferBatchIn,
    who: PrincipalDep,
    uow: UnitOfWorkDep,
    idem: IdempotencyDep,
) -> JSONResponse:
    seller_id = account_id_for(who, Scope.OFFERS_WRITE, Role.SELLER)
    once = idem.once(body, scope=seller_id)
    return idem.answer(await service.submit_many(uow, seller_id=seller_id, batch=body, once=once))


@router.patch(
    "/{offer_id}",
    **write_route(CLOSED),
    response_model=OfferOut,
    summary="Re-price or resize",
)
async def update_offer(
    offer_id: ResourceId, body: OfferChange, who: PrincipalDep, uow: UnitOfWorkDep
) -> OfferOut:
    seller_id = account_id_for(who, Scope.OFFERS_WRITE, Role.SELLER)
    return await service.change(uow, seller_id=seller_id, offer_id=offer_id, body=body)


@router.delete(
    "/{offer_id}",
    **write_route(CLOSED),
    response_model=OfferOut,
    summary="Withdraw",
)
async def withdraw_offer(offer_id: ResourceId, who: PrincipalDep, uow: UnitOfWorkDep) -> OfferOut:
    seller_id = account_id_for(who, Scope.OFFERS_WRITE, Role.SELLER)
    return await service.withdraw(uow, seller_id=seller_id, offer_id=offer_id)


@router.get("", response_model=Page[OfferOut], summary="The seller's offers")
async def list_offers(
    who: PrincipalDep,
    uow: UnitOfWorkDep,
    page: PageQueryDep,
) -> Page[OfferOut]:
    seller_id = account_id_for(who, Scope.READ, Role.SELLER)
    return await service.page(uow, seller_id, limit=page.limit, cursor=page.cursor)


@router.get("/{offer_id}", response_model=OfferOut, summary="One of the seller's offers")
async def get_offer(offer_id: ResourceId, who: PrincipalDep, uow: UnitOfWorkDep) -> OfferOut:
    seller_id = account_id_for(who, Scope.READ, Role.SELLER)
    return await service.get(uow, seller_id, offer_id)
