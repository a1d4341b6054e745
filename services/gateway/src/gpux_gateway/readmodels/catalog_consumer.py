"""Feeds the catalog view from Kafka: read whole, without a consumer group, from earliest.

Every gateway replica needs the whole catalog (a few dozen records), not a share of the
partitions; see ``gpux_platform.compacted``.
"""

from __future__ import annotations

from faststream.kafka import KafkaRouter

from gpux_contracts.topics import CATALOG_GPUS, CATALOG_MODELS
from gpux_gateway.readmodels.catalog import CatalogView
from gpux_platform.compacted import view_router
from gpux_platform.settings import GpuxSettings


def catalog_view(settings: GpuxSettings) -> CatalogView:
    """An empty view of this namespace's catalog topics."""
    return CatalogView(settings.topic(CATALOG_GPUS), settings.topic(CATALOG_MODELS))


def catalog_router(view: CatalogView) -> KafkaRouter:
    """The subscriber that applies every catalog record to ``view``."""
    return view_router(
        view,
        title="gateway-catalog-view",
        description="Rebuilds the gateway's in-memory catalog (no consumer group).",
    )
