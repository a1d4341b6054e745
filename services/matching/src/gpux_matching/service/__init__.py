"""Matching's handlers, by the topic they read and the payload class they take.

``pricing.offers``, ``orders.book`` and ``capacity.commands`` are the book's inputs: their
handlers run in a unit of work of the input's partition (``BookUnitOfWork``), whose engine
they change. ``market.sessions``
only keeps the market's state (``MatchingUnitOfWork``). ``fx.rates`` is read whole by every
instance, outside any unit (``fx.FxFeed``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpux_contracts.capacity import LeaseReclaimRequested, LeaseReleased
from gpux_contracts.events import Payload
from gpux_contracts.market import MarketStateChanged
from gpux_contracts.offers import OfferAccepted, OfferWithdrawn
from gpux_contracts.orders import OrderCancelRequested, OrderFunded
from gpux_contracts.topics import (
    CAPACITY_COMMANDS,
    MARKET_SESSIONS,
    ORDERS_BOOK,
    PRICING_OFFERS,
    Topic,
)
from gpux_matching.service import capacity, offers, orders, sessions
from gpux_matching.service.unit_of_work import BookUnitOfWork, MatchingUnitOfWork
from gpux_platform.batches import Handler

OFFER_HANDLERS: dict[type[Payload], Handler[BookUnitOfWork]] = {
    OfferAccepted: offers.on_accepted,
    OfferWithdrawn: offers.on_withdrawn,
}
ORDER_HANDLERS: dict[type[Payload], Handler[BookUnitOfWork]] = {
    OrderFunded: orders.on_funded,
    OrderCancelRequested: orders.on_cancel_requested,
}
CAPACITY_HANDLERS: dict[type[Payload], Handler[BookUnitOfWork]] = {
    LeaseReleased: capacity.on_released,
    LeaseReclaimRequested: capacity.on_reclaim_requested,
}
SESSION_HANDLERS: dict[type[Payload], Handler[MatchingUnitOfWork]] = {
    MarketStateChanged: sessions.on_state_changed,
}

BOOK_HANDLERS: dict[Topic, Mapping[type[Payload], Handler[BookUnitOfWork]]] = {
    PRICING_OFFERS: OFFER_HANDLERS,
    ORDERS_BOOK: ORDER_HANDLERS,
    CAPACITY_COMMANDS: CAPACITY_HANDLERS,
}
"""The book's inputs: co-partitioned topics, applied per partition."""

HANDLERS_BY_TOPIC: dict[Topic, Mapping[type[Payload], Handler[Any]]] = {
    **BOOK_HANDLERS,
    MARKET_SESSIONS: SESSION_HANDLERS,
}
"""Every handler of matching, by topic and payload class."""
