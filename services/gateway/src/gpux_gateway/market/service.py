"""Market data shown in the currency asked for, the session state, and the admin's changes.

Quotes and candles are pricing's Redis read models; the sessions and the order books are
the gateway's in-memory views of compacted topics. ``POST /v1/admin/market`` writes
``market.state_changed`` to the outbox for ``market.sessions`` (key ``*`` for the whole
market, else the GPU id); matching rejects new funded orders while a GPU or the whole market
is halted. Before any event every scope is open.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from gpux_contracts.book import BookLevel, BookLevelsChanged
from gpux_contracts.ids import new_id
from gpux_contracts.market import ALL_GPUS, MarketStateChanged
from gpux_contracts.money import Currency
from gpux_contracts.offers import Tier
from gpux_contracts.prices import BestAskChanged
from gpux_contracts.reliability import ReliabilityCounts
from gpux_contracts.topics import MARKET_SESSIONS
from gpux_gateway.catalog.service import require_loaded
from gpux_gateway.market.schemas import (
    AskOut,
    BookLevelOut,
    CandleOut,
    HistoryOut,
    IntervalParam,
    LevelOut,
    MarketOut,
    MarketStateAccepted,
    MarketStateIn,
    OrderBookOut,
    PriceList,
    PriceOut,
)
from gpux_gateway.readmodels.catalog import CatalogView
from gpux_gateway.readmodels.market import MarketView
from gpux_gateway.readmodels.orderbook import BookView
from gpux_gateway.reliability.schemas import ReliabilityCountsOut, counts_out
from gpux_gateway.service.access import not_found
from gpux_gateway.service.commands import send
from gpux_gateway.service.unit_of_work import GatewayUnitOfWork
from gpux_platform.problems import ProblemError

ALL = "all"
"""The request's name for the whole market (``*`` on the topic)."""
RETRY_AFTER_S = 5


def price_out(quote: BestAskChanged, currency: Currency) -> PriceOut:
    """A quote shown in one currency (levels without a rate for it are left out), with its
    sellers' reliability as pricing counted it in."""
    best = None
    if quote.best is not None and currency in quote.best.prices:
        best = AskOut(
            offer_id=quote.best.offer_id,
            price=quote.best.prices[currency],
            currency=currency,
            offered_price=quote.best.price,
            offered_currency=quote.best.currency,
            gpus=quote.best.gpus,
            seller_reliability=_counts(quote.best.seller_reliability),
        )
    depth = [
        LevelOut(
            price=level.prices[currency],
            gpus=level.gpus,
            reliability=_counts(level.reliability),
            min_reliability=level.min_reliability,
        )
        for level in quote.depth
        if currency in level.prices
    ]
    return PriceOut(
        gpu=quote.gpu,
        tier=quote.tier,
        region=quote.region,
        currency=currency,
        best_ask=best,
        depth=depth,
        as_of=quote.as_of.isoformat().replace("+00:00", "Z"),
    )


def _counts(counts: ReliabilityCounts | None) -> ReliabilityCountsOut | None:
    return None if counts is None else counts_out(counts)


def price_list(quotes: Iterable[BestAskChanged], currency: Currency) -> PriceList:
    """Quotes shown in one currency."""
    return PriceList(items=[price_out(q, currency) for q in quotes])


def history_out(
    raw: dict[str, Any] | None,
    gpu: str,
    tier: Tier,
    interval: IntervalParam,
    currency: Currency,
) -> HistoryOut:
    """Pricing's read model shown in one currency (candles without a rate for it left out)."""
    candles: list[CandleOut] = []
    vwap = None
    if raw is not None:
        vwap = (raw.get("vwap_24h") or {}).get(currency.value)
        for candle in raw.get("candles", []):
            prices = candle["prices"].get(currency.value)
            if prices is not None:
                candles.append(CandleOut(start=candle["start"], gpus=candle["gpus"], **prices))
    return HistoryOut(
        gpu=gpu, tier=tier, interval=interval, currency=currency, vwap_24h=vwap, candles=candles
    )


def set_state(uow: GatewayUnitOfWork, body: MarketStateIn) -> MarketStateAccepted:
    """Open or halt trading: the change goes to ``market.sessions`` through the outbox."""
    scope = ALL_GPUS if body.scope == ALL else body.scope
    changed = MarketStateChanged(
        scope=scope,
        state=body.state,
        reason=body.reason,
        changed_at=uow.now,
        changed_by="admin",
    )
    event_id = new_id()
    send(uow, MARKET_SESSIONS, scope, changed, event_id)
    return MarketStateAccepted(
        event_id=event_id, scope=body.scope, state=body.state, reason=body.reason
    )


def _unavailable(slug: str, what: str) -> ProblemError:
    return ProblemError(
        503,
        slug,
        "Service unavailable",
        f"{what} has not been loaded from Kafka yet; retry shortly",
        headers={"Retry-After": str(RETRY_AFTER_S)},
    )


def market_state(view: MarketView) -> MarketOut:
    """Whether trading is open, from the view (503 until it has read the topic)."""
    if not view.ready:
        raise _unavailable("market-unavailable", "the market state")
    return MarketOut(all=view.all_state(), gpus=view.gpu_states())


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


def require_known_gpu(catalog: CatalogView, gpu: str) -> None:
    """404 for a GPU model the catalog does not have (an unread catalog refuses nothing)."""
    if catalog.lacks_gpu(gpu):
        raise not_found(f"no GPU model {gpu!r}")


def orderbook(
    catalog: CatalogView, books: BookView, *, gpu: str, tier: Tier, currency: Currency
) -> OrderBookOut:
    """One known GPU model's book (404 for an unknown model, 503 until the views are read)."""
    require_loaded(catalog)
    require_known_gpu(catalog, gpu)
    if not books.ready:
        raise _unavailable("orderbook-unavailable", "the order book")
    return book_out(gpu, tier, books.book(gpu, tier), currency)
