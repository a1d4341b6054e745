"""Which GPU models exist: the catalog's ``catalog.gpus``."""

from __future__ import annotations

from gpux_contracts.catalog import GpuPublished
from gpux_contracts.events import Envelope
from gpux_pricing.service.unit_of_work import PricingUnitOfWork


async def on_gpu_published(uow: PricingUnitOfWork, event: Envelope[GpuPublished]) -> None:
    """Remember a GPU model of the catalog."""
    await uow.gpus.upsert(event.payload.id, event.payload.name)
