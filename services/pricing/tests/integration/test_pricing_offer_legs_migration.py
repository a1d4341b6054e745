"""Migration 0005 on offers pricing stored before it: each gets the tiers it is sold in, its
interruptible price and its notice from its body, and is found in its books as before."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import asyncpg
import pytest

from gpux_contracts.offers import OfferStatus, OfferSubmitted, Tier
from gpux_devinfra.testing.database import migrated_pool
from gpux_devinfra.testing.payloads import offer_submitted
from gpux_platform import migrations
from gpux_platform.clock import ManualClock
from gpux_platform.settings import GpuxSettings
from gpux_pricing.adapters.memory.read_models import MemoryReadModels
from gpux_pricing.adapters.postgres.unit_of_work import PostgresPricingUnitOfWork
from gpux_pricing.bootstrap import MIGRATIONS
from gpux_pricing.config import PricingSettings
from gpux_pricing.service.market import BookCache

pytestmark = pytest.mark.integration

BEFORE = ("0001_pricing.sql", "0002_book_state.sql", "0003_history.sql", "0004_book_versions.sql")
OLD = offer_submitted("old-1", price="0.40")
"""An offer stored before capacity: its body has no interruptible price and no notice."""
TWO = offer_submitted(
    "new-1", price="0.40", interruptible_price_per_gpu_hour="0.25", interruption_notice_seconds=300
)
"""An offer stored by a pricing that read the new contract before the migration ran."""
SINGLE = offer_submitted("old-2", price="0.20", tier=Tier.INTERRUPTIBLE)


@pytest.fixture
async def pool(module_settings: GpuxSettings, tmp_path: Path) -> AsyncIterator[asyncpg.Pool]:
    """Pricing's schema as it stood before 0005 (the module's database is its own)."""
    for name in BEFORE:
        shutil.copy(MIGRATIONS / name, tmp_path / name)
    async with migrated_pool(module_settings, "pricing", tmp_path) as pool:
        yield pool


async def store_as_before(pool: asyncpg.Pool, offer: OfferSubmitted, body: str) -> None:
    await pool.execute(
        "INSERT INTO pricing.offers (offer_id, seller_id, gpu, revision, status, body,"
        " updated_at, remaining, on_book) VALUES ($1, $2, $3, 1, 'live', $4::jsonb, now(), 2,"
        " true)",
        offer.offer_id,
        offer.seller_id,
        offer.gpu,
        body,
    )


async def test_offers_stored_before_get_their_tiers_prices_and_notice(
    pool: asyncpg.Pool,
) -> None:
    old_body = OLD.model_dump_json(
        exclude={"interruptible_price_per_gpu_hour", "interruption_notice_seconds"}
    )
    await store_as_before(pool, OLD, old_body)
    await store_as_before(pool, TWO, TWO.model_dump_json())
    await store_as_before(
        pool, SINGLE, SINGLE.model_dump_json(exclude={"interruptible_price_per_gpu_hour"})
    )
    applied = await migrations.apply(pool, "pricing", MIGRATIONS)
    assert applied[:1] == ["0005_offer_legs"]  # then those after it, the schema of today
    rows = await pool.fetch(
        "SELECT offer_id, interruptible_price, interruption_notice_seconds, tiers"
        " FROM pricing.offers ORDER BY offer_id"
    )
    assert [tuple(r) for r in rows] == [
        ("new-1", Decimal("0.25"), 300, ["on_demand", "interruptible"]),
        ("old-1", None, 120, ["on_demand"]),
        ("old-2", None, 120, ["interruptible"]),
    ]
    settings = PricingSettings()
    unit = PostgresPricingUnitOfWork(
        pool,
        cache=BookCache(),
        read_models=MemoryReadModels(),
        clock=ManualClock(datetime(2026, 12, 1, tzinfo=UTC)),
        band_for=settings.band_for,
    )
    async with unit as uow:
        gpu = OLD.gpu
        assert await uow.offers.books() == [(gpu, "interruptible"), (gpu, "on_demand")]
        assert await uow.offers.on_book(gpu, "on_demand") == [(TWO, 2), (OLD, 2)]
        assert await uow.offers.on_book(gpu, "interruptible") == [(TWO, 2), (SINGLE, 2)]
        known = await uow.offers.get("old-1")
        assert known is not None
        assert (known.offer, known.status) == (OLD, OfferStatus.LIVE)
