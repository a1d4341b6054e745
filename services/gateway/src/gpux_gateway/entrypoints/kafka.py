"""The gateway's Kafka subscribers.

- One batched subscriber per topic of ``service.HANDLERS_BY_TOPIC`` (each in its group): a
  batch is one unit of work (one transaction, the inbox claimed in one statement, the views
  written in pipelined runs), and its offsets are committed once, after the commit. They run
  in processes of role ``all`` or ``views`` (``config.GatewayRole``), never in ``api`` ones.
- The in-memory views of compacted topics (catalog, market sessions, order books, and the
  key cache that ``gateway.accounts`` and ``gateway.keys`` keep fresh) read their topics
  whole, without a group (``gpux_platform.compacted``).
"""

from __future__ import annotations

from collections.abc import Mapping

from faststream.kafka import KafkaRouter
from opentelemetry.trace import TracerProvider

from gpux_contracts.topics import (
    ACCOUNTS,
    BILLING_BALANCES,
    BILLING_LEASES,
    BILLING_LEDGER,
    BILLING_PAYOUTS,
    BILLING_RELIABILITY,
    CATALOG_GPUS,
    CATALOG_MODELS,
    KEYS,
    MARKET_BOOK,
    MARKET_SESSIONS,
    MARKET_TRADES,
    OFFERS_STATUS,
    ORDERS_BOOK,
    ORDERS_STATUS,
    PRICING_OFFERS,
    Topic,
)
from gpux_gateway.entrypoints.context import Views
from gpux_gateway.readmodels.catalog import CatalogView
from gpux_gateway.readmodels.market import MarketView
from gpux_gateway.readmodels.orderbook import BookView
from gpux_gateway.readmodels.principals import PrincipalCache
from gpux_gateway.service import HANDLERS_BY_TOPIC
from gpux_gateway.service.unit_of_work import GatewayUnitOfWork, UnitOfWorkFactory
from gpux_platform.batches import BatchHandler, subscribe_batches
from gpux_platform.compacted import view_router
from gpux_platform.settings import GpuxSettings

GROUPS: Mapping[Topic, str] = {
    OFFERS_STATUS: "gateway.offers-status",
    PRICING_OFFERS: "gateway.offers-accepted",
    ORDERS_BOOK: "gateway.orders-funded",
    ORDERS_STATUS: "gateway.orders-status",
    MARKET_TRADES: "gateway.order-fills",
    BILLING_LEASES: "gateway.leases",
    BILLING_LEDGER: "gateway.ledger",
    BILLING_BALANCES: "gateway.balances",
    BILLING_PAYOUTS: "gateway.payouts",
    BILLING_RELIABILITY: "gateway.reliability",
}
"""The consumer group of each topic whose events keep a PostgreSQL view."""


def view_topics(settings: GpuxSettings) -> frozenset[str]:
    """The physical names of the topics whose consumers keep the PostgreSQL views."""
    return frozenset(settings.topic(topic) for topic in GROUPS)


def view_groups(settings: GpuxSettings) -> dict[str, str]:
    """Each view topic's physical name → the physical name of the group that reads it."""
    return {settings.topic(topic): settings.group(group) for topic, group in GROUPS.items()}


def views_router(
    settings: GpuxSettings, unit_of_work: UnitOfWorkFactory, tracer_provider: TracerProvider
) -> KafkaRouter:
    """The batched subscribers that keep the gateway's PostgreSQL views.

    Each event is handled in a consumer span of its own trace, exported by the gateway's
    ``tracer_provider`` (a batch mixes the traces of many requests).
    """
    router = KafkaRouter()
    for topic, handlers in HANDLERS_BY_TOPIC.items():
        batch = BatchHandler[GatewayUnitOfWork](topic, handlers, unit_of_work)
        subscribe_batches(
            router, settings, group=GROUPS[topic], batch=batch, tracer_provider=tracer_provider
        )
    return router


def memory_views(settings: GpuxSettings, principal_cache_size: int) -> Views:
    """Empty in-memory views of this namespace's compacted topics."""
    return Views(
        catalog=CatalogView(settings.topic(CATALOG_GPUS), settings.topic(CATALOG_MODELS)),
        sessions=MarketView(settings.topic(MARKET_SESSIONS)),
        books=BookView(settings.topic(MARKET_BOOK)),
        principals=PrincipalCache(
            settings.topic(ACCOUNTS), settings.topic(KEYS), principal_cache_size
        ),
    )


def memory_view_routers(views: Views) -> list[KafkaRouter]:
    """The subscribers (no group, from the earliest offset) that fill the in-memory views."""
    return [
        view_router(
            views.catalog,
            title="gateway-catalog-view",
            description="Rebuilds the gateway's in-memory catalog (no consumer group).",
        ),
        view_router(
            views.sessions,
            title="gateway-market-view",
            description="Rebuilds the gateway's in-memory market sessions (no consumer group).",
        ),
        view_router(
            views.books,
            title="gateway-orderbook-view",
            description="Rebuilds the gateway's in-memory order book levels (no consumer group).",
        ),
        view_router(
            views.principals,
            title="gateway-principals-view",
            description="Drops the cached keys of changed accounts and keys (no consumer group).",
        ),
    ]
