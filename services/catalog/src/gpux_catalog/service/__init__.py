"""The catalog's handlers.

The catalog consumes no topic: it publishes its packaged data (``publication.sync_catalog``,
run at start-up and by the periodic check in ``entrypoints.loops``) and reads nothing from
Kafka. ``HANDLERS``, the map of payload class to handler every service declares, is
therefore empty, and no batched subscriber is built from it.
"""

from __future__ import annotations

from collections.abc import Mapping

from gpux_catalog.service.unit_of_work import CatalogUnitOfWork
from gpux_contracts.events import Payload
from gpux_platform.batches import Handler

HANDLERS: Mapping[type[Payload], Handler[CatalogUnitOfWork]] = {}
"""Consumed payload class -> handler: none, the catalog reads no topic."""
