"""The order book of one GPU model and tier: aggregated bid and ask levels, best first.

Answers from the gateway's in-memory view of ``market.book`` (``readmodels.orderbook``),
which matching publishes in the transaction of every command that changes a book. Prices are
the resting prices' value in the book's reference currency (EUR), converted by matching at
the FX rates it ranks with; a level without a rate for the currency asked for is left out,
never guessed. Public market data, rate-limited per client address like the others.
"""

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Query
from pydantic import BaseModel, Field

from gpux_contracts.book import BookLevel, BookLevelsChanged
from gpux_contracts.money import Currency, DecimalAmount
from gpux_contracts.offers import Tier
from gpux_gateway.api.auth import anonymous_limit
from gpux_gateway.api.catalog import require_loaded
from gpux_gateway.context import Gateway
from gpux_gateway.readmodels.catalog import CatalogView
from gpux_gateway.readmodels.orderbook import BookView
from gpux_platform.problems import PROBLEM_MEDIA_TYPE, ProblemError

RETRY_AFTER_S = 5


class BookLevelOut(BaseModel):
    """GPUs resting at one price."""

    price: DecimalAmount = Field(description="Per GPU-hour, in the book's `currency`.")
    gpus: int = Field(description="GPUs resting at this price.")
    orders: int = Field(description="Resting bids (bids) or live offers (asks) at this price.")


class OrderBookOut(BaseModel):
    """Both sides of one book, best first, at most `depth` levels each."""

    gpu: str
    tier: Tier
    currency: Currency
    bids: list[BookLevelOut] = Field(
        description="Highest first: bids of this tier and bids for `any` tier."
    )
    asks: list[BookLevelOut] = Field(description="Lowest first: live offers of this tier.")
    depth: int = Field(description="The most levels shown per side.")
    sequence: int | None = Field(
        description="Matching's command sequence of this state; null: nothing ever rested."
    )
    as_of: str | None = Field(description="When the book last changed; null: never.")


def _levels(levels: list[BookLevel], currency: Currency) -> list[BookLevelOut]:
    return [
        BookLevelOut(price=level.prices[currency], gpus=level.gpus, orders=level.orders)
        for level in levels
        if currency in level.prices
    ]


def book_out(
    gpu: str, tier: Tier, book: BookLevelsChanged | None, currency: Currency
) -> OrderBookOut:
    """One book shown in one currency (an empty book when matching never published it)."""
    if book is None:
        return OrderBookOut(
            gpu=gpu,
            tier=tier,
            currency=currency,
            bids=[],
            asks=[],
            depth=20,
            sequence=None,
            as_of=None,
        )
    return OrderBookOut(
        gpu=gpu,
        tier=tier,
        currency=currency,
        bids=_levels(book.bids, currency),
        asks=_levels(book.asks, currency),
        depth=book.depth,
        sequence=book.sequence,
        as_of=book.as_of.isoformat().replace("+00:00", "Z"),
    )


PROBLEMS: dict[int | str, dict[str, Any]] = {
    status: {
        "description": description,
        "content": {PROBLEM_MEDIA_TYPE: {"schema": {"$ref": "#/components/schemas/Problem"}}},
    }
    for status, description in (
        (404, "No GPU model with this id"),
        (503, "The catalog or the book has not been read from Kafka yet (retry shortly)"),
    )
}


def router(gw: Gateway, books: BookView, catalog: CatalogView) -> APIRouter:
    """``GET /v1/orderbook/{gpu}`` (public market data, rate-limited per client address)."""
    api = APIRouter(prefix="/v1/orderbook", tags=["market data"])

    @api.get(
        "/{gpu}",
        response_model=OrderBookOut,
        responses=PROBLEMS,
        dependencies=[Depends(anonymous_limit(gw))],
        summary="Aggregated bid and ask levels of one GPU model and tier",
    )
    async def orderbook(
        gpu: Annotated[str, Path(max_length=64)],
        tier: Annotated[Tier, Query(description="The book's tier.")] = Tier.ON_DEMAND,
        currency: Annotated[Currency, Query(description="Show prices in this currency.")] = (
            Currency.EUR
        ),
    ) -> OrderBookOut:
        require_loaded(catalog)
        if catalog.gpu(gpu) is None:
            raise ProblemError(404, "not-found", "Not found", f"no GPU model {gpu!r}")
        if not books.ready:
            raise ProblemError(
                503,
                "orderbook-unavailable",
                "Service unavailable",
                "the order book has not been loaded from Kafka yet; retry shortly",
                headers={"Retry-After": str(RETRY_AFTER_S)},
            )
        return book_out(gpu, tier, books.book(gpu, tier), currency)

    return api
