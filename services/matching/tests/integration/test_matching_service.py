"""The matching service in-process: offers in from pricing.offers, statuses out on offers.status.

Inputs are published as pricing would (producer ``pricing``); the outputs are read back from
Kafka. A restart (leave ``running``, enter it again) must restore the book from the snapshot
and the command log, and publish nothing twice.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from decimal import Decimal
from typing import Any

import asyncpg

from gpux_contracts.events import EventCodec
from gpux_contracts.fx import RatePublished
from gpux_contracts.money import Currency
from gpux_contracts.offers import (
    OfferStatusChanged,
    OfferSubmitted,
    OfferWithdrawn,
)
from gpux_contracts.topics import FX_RATES, OFFERS_STATUS, PRICING_OFFERS
from gpux_devinfra.testing.kafka import publish_payloads, read_to_end
from gpux_devinfra.testing.services import running
from gpux_devinfra.testing.waiting import eventually
from gpux_matching.bootstrap import SPEC
from gpux_platform.clock import SystemClock
from gpux_platform.settings import GpuxSettings

from . import matching_feed as feed

CODEC: EventCodec[Any] = EventCodec(OfferStatusChanged)
GPU = "rtx-4090"


async def rates(settings: GpuxSettings) -> None:
    as_of = SystemClock().now()
    items = [
        (
            f"{code}/EUR",
            RatePublished(
                base=Currency(code),
                quote=Currency("EUR"),
                rate=Decimal(rate),
                as_of=as_of,
                source="test",
            ),
        )
        for code, rate in (("USD", "0.92"), ("GBP", "1.18"))
    ]
    await publish_payloads(settings, FX_RATES, "pricing", items)


def offer(price: str, currency: str, gpus: int, until_s: float | None = None) -> OfferSubmitted:
    until = None if until_s is None else SystemClock().now() + timedelta(seconds=until_s)
    return feed.offer(GPU, price, gpus, currency=Currency(currency), available_until=until)


async def withdraw(settings: GpuxSettings, o: OfferSubmitted) -> None:
    withdrawn = OfferWithdrawn(offer_id=o.offer_id, seller_id=o.seller_id, gpu=o.gpu)
    await publish_payloads(settings, PRICING_OFFERS, "pricing", [(o.gpu, withdrawn)])


async def statuses(settings: GpuxSettings) -> list[tuple[str, str, int]]:
    """(offer id, status, remaining) of every status the book published, in order."""
    seen = await read_to_end(settings, OFFERS_STATUS, CODEC, "matching")
    return [(p.offer_id, p.status.value, p.remaining_gpus) for p in seen]


async def statuses_until(
    settings: GpuxSettings, check: Callable[[list[tuple[str, str, int]]], bool]
) -> list[tuple[str, str, int]]:
    """Every status the book published (``statuses``), once ``check`` holds for them."""
    return await eventually(
        lambda: statuses(settings), check, what="the offers' statuses", interval_s=0.3
    )


async def test_offers_go_live_change_withdraw_expire_and_survive_a_restart(
    module_settings: GpuxSettings,
) -> None:
    settings = module_settings
    usd = offer("0.40", "USD", 4)
    eur = offer("0.35", "EUR", 2)
    short = offer("0.30", "GBP", 8, until_s=3)
    kept = offer("0.50", "GBP", 1)
    async with running(SPEC, settings, snapshot_every=3, expiry_interval_s=0.2):
        await rates(settings)
        await feed.accept(settings, usd, eur, short)
        seen = await statuses_until(
            settings,
            lambda s: {(usd.offer_id, "live", 4), (eur.offer_id, "live", 2)} <= set(s),
        )
        assert (usd.offer_id, "live", 4) in seen
        assert (eur.offer_id, "live", 2) in seen
        assert (short.offer_id, "live", 8) in seen

        # A second revision sets the GPU count; a withdrawal takes the offer off.
        await feed.accept(settings, usd.model_copy(update={"gpus": 3}), revision=2)
        await withdraw(settings, eur)
        await feed.accept(settings, kept)
        seen = await statuses_until(
            settings,
            lambda s: (
                {
                    (usd.offer_id, "live", 3),
                    (eur.offer_id, "withdrawn", 0),
                    (kept.offer_id, "live", 1),
                }
                <= set(s)
            ),
        )
        assert (usd.offer_id, "live", 3) in seen
        assert (eur.offer_id, "withdrawn", 0) in seen

        # The short offer expires by itself.
        seen = await statuses_until(settings, lambda s: (short.offer_id, "expired", 0) in s)
        assert (short.offer_id, "expired", 0) in seen
        before = len(seen)

    conn = await asyncpg.connect(settings.database_url.get_secret_value())
    try:
        assert await conn.fetchval("SELECT count(*) FROM matching.snapshots") >= 1
    finally:
        await conn.close()

    async with running(SPEC, settings, snapshot_every=3, expiry_interval_s=0.2):
        await withdraw(settings, kept)
        seen = await statuses_until(settings, lambda s: (kept.offer_id, "withdrawn", 0) in s)
        assert (kept.offer_id, "withdrawn", 0) in seen
        # The restored book re-emits nothing: only the new withdrawal was added.
        assert len(seen) == before + 1
        assert seen.count((kept.offer_id, "live", 1)) == 1
        assert seen.count((usd.offer_id, "live", 4)) == 1
