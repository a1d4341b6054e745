"""One suite for pricing's repositories, run on memory and on PostgreSQL.

The memory unit of work the service tests use must answer as the real one: what a unit
committed is what the next unit reads, a unit left without commit leaves nothing, the FX
rule, the candle rule and the reliability rule are the same, and so are the books' versions
and the books of each seller's open offers.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import asyncpg
import pytest

from gpux_contracts.accounts import AccountStatus
from gpux_contracts.money import Currency
from gpux_contracts.offers import OfferStatus, OfferSubmitted, Tier
from gpux_contracts.orders import TradeExecuted
from gpux_contracts.reliability import ReliabilityCounts
from gpux_devinfra.testing.payloads import offer_submitted, trade_executed
from gpux_platform.clock import ManualClock
from gpux_pricing.adapters.memory.read_models import MemoryReadModels
from gpux_pricing.adapters.memory.unit_of_work import MemoryPricingUnitOfWork
from gpux_pricing.adapters.postgres.unit_of_work import PostgresPricingUnitOfWork
from gpux_pricing.config import PricingSettings
from gpux_pricing.domain.candles import Candle, Interval, rolls
from gpux_pricing.domain.fx import Rate
from gpux_pricing.domain.validation import SellerView
from gpux_pricing.service.market import BookCache
from gpux_pricing.service.unit_of_work import (
    Decision,
    KnownOffer,
    PricingUnitOfWork,
    RecentTrades,
)

pytestmark = pytest.mark.integration

Units = Callable[[], AbstractAsyncContextManager[PricingUnitOfWork]]
AT = datetime(2026, 11, 28, 10, 0, 5, tzinfo=UTC)
TABLES = (
    "sellers, gpus, fx_rates, offers, seller_reliability, book_versions, trades, candles, inbox,"
    " outbox"
)


@pytest.fixture
async def empty_pool(pool: asyncpg.Pool) -> asyncpg.Pool:
    """The pool, pricing's tables emptied of what an earlier test left."""
    await pool.execute(f"TRUNCATE {', '.join(f'pricing.{t}' for t in TABLES.split(', '))}")
    return pool


@pytest.fixture(params=["memory", "postgres"])
def units(request: pytest.FixtureRequest) -> Units:
    """Opens units of work on one empty store: a memory state, or pricing's emptied tables."""
    clock = ManualClock(AT)
    band_for = PricingSettings().band_for
    if request.param == "memory":
        unit = MemoryPricingUnitOfWork(clock=clock, band_for=band_for)
        return lambda: unit
    pool: asyncpg.Pool = request.getfixturevalue("empty_pool")
    cache, models = BookCache(), MemoryReadModels()
    return lambda: PostgresPricingUnitOfWork(
        pool, cache=cache, read_models=models, clock=clock, band_for=band_for
    )


def offer(offer_id: str, tier: Tier = Tier.ON_DEMAND, gpu: str = "rtx-4090") -> OfferSubmitted:
    return offer_submitted(offer_id, tier=tier, gpu=gpu, region="eu-west")


def trade(trade_id: str, price: str, at: datetime, gpus: int = 1) -> TradeExecuted:
    return trade_executed(
        trade_id=trade_id, price=price, gpus=gpus, currency=Currency.EUR, executed_at=at
    )


async def test_what_a_unit_commits_the_next_reads_and_a_unit_left_leaves_nothing(
    units: Units,
) -> None:
    async with units() as uow:
        await uow.sellers.upsert("a1", AccountStatus.ACTIVE, is_seller=True)
        await uow.gpus.upsert("rtx-4090", "RTX 4090")
        await uow.commit()
    async with units() as uow:
        await uow.sellers.upsert("a1", AccountStatus.SUSPENDED, is_seller=False)
        await uow.gpus.upsert("h100-sxm", "H100")
    async with units() as uow:
        assert await uow.sellers.get("a1") == SellerView(AccountStatus.ACTIVE, True)
        assert await uow.sellers.get("a2") is None
        assert await uow.gpus.known("rtx-4090")
        assert not await uow.gpus.known("h100-sxm")


async def test_rates_follow_the_fx_rule(units: Units) -> None:
    async with units() as uow:
        await uow.rates.upsert(Rate(Currency.USD, Currency.EUR, Decimal("0.92"), AT))
        await uow.rates.upsert(Rate(Currency.GBP, Currency.EUR, Decimal("1.18"), AT))
        await uow.commit()
    async with units() as uow:
        older = AT - timedelta(hours=1)
        await uow.rates.upsert(Rate(Currency.USD, Currency.EUR, Decimal("0.50"), older))
        await uow.rates.upsert(Rate(Currency.GBP, Currency.EUR, Decimal("1.20"), AT))
        await uow.commit()
    async with units() as uow:
        table = await uow.rates.table()
    assert table.factor(Currency.USD, AT, None) == Decimal("0.92")
    assert table.factor(Currency.GBP, AT, None) == Decimal("1.20")


async def test_offers_keep_their_latest_revision_and_what_the_book_holds(units: Units) -> None:
    async with units() as uow:
        for o in (offer("o1"), offer("o2"), offer("o3", Tier.INTERRUPTIBLE)):
            await uow.offers.save(o, Decision(1, OfferStatus.ACCEPTED), AT)
        rejected = Decision(1, OfferStatus.REJECTED, "unknown_gpu")
        await uow.offers.save(offer("o4", gpu="h100-sxm"), rejected, AT)
        await uow.commit()
    repriced = offer("o2").model_copy(update={"price_per_gpu_hour": Decimal("0.35")})
    async with units() as uow:
        assert await uow.offers.set_book_state("o1", OfferStatus.LIVE, 3, AT) == offer("o1")
        assert await uow.offers.set_book_state("o2", OfferStatus.LIVE, 4, AT) == offer("o2")
        assert await uow.offers.set_book_state("o3", OfferStatus.EXHAUSTED, 0, AT) == offer(
            "o3", Tier.INTERRUPTIBLE
        )
        assert await uow.offers.set_book_state("nope", OfferStatus.LIVE, 1, AT) is None
        await uow.offers.save(repriced, Decision(2, OfferStatus.ACCEPTED), AT)
        await uow.commit()
    async with units() as uow:
        assert await uow.offers.get("o2") == KnownOffer(repriced, 2, OfferStatus.ACCEPTED)
        assert await uow.offers.get("o3") == KnownOffer(
            offer("o3", Tier.INTERRUPTIBLE), 1, OfferStatus.EXHAUSTED
        )
        assert await uow.offers.get("nope") is None
        # A new revision keeps what the book holds of the offer until the book says more.
        assert await uow.offers.on_book("rtx-4090", "on_demand") == [
            (offer("o1"), 3),
            (repriced, 4),
        ]
        assert await uow.offers.on_book("rtx-4090", "interruptible") == []
        assert await uow.offers.books() == [
            ("rtx-4090", "interruptible"),
            ("rtx-4090", "on_demand"),
        ]


async def test_book_versions_move_by_one_per_unit(units: Units) -> None:
    a, b = ("rtx-4090", "on_demand"), ("rtx-4090", "interruptible")
    async with units() as uow:
        assert await uow.book_versions.get(a) == 0
        assert await uow.book_versions.bump([a, b, a]) == {a: 1, b: 1}
        await uow.commit()
    async with units() as uow:
        assert await uow.book_versions.bump([a]) == {a: 2}  # left without commit
    async with units() as uow:
        assert await uow.book_versions.bump([a]) == {a: 2}
        assert await uow.book_versions.get(a) == 2
        assert await uow.book_versions.get(b) == 1
        assert await uow.book_versions.bump([]) == {}


async def test_a_trade_is_recorded_once_and_the_vwap_covers_its_window(units: Units) -> None:
    later = AT + timedelta(hours=30)
    day = timedelta(hours=24)
    on_demand, interruptible = ("rtx-4090", "on_demand"), ("rtx-4090", "interruptible")
    async with units() as uow:
        assert await uow.trades.record([(trade("t1", "0.40", AT, 2), Decimal("0.40"))]) == {"t1"}
        assert await uow.trades.record([(trade("t1", "0.40", AT, 2), Decimal("0.40"))]) == set()
        assert await uow.trades.record([(trade("t2", "0.30", AT, 1), None)]) == {"t2"}  # no rate
        await uow.commit()
    async with units() as uow:
        assert await uow.trades.recent([on_demand, interruptible], day) == {
            on_demand: RecentTrades(AT, Decimal("0.400000")),
            interruptible: RecentTrades(None, None),
        }
        batch = [
            (trade("t3", "0.50", later, 3), Decimal("0.50")),
            (trade("t1", "0.40", AT, 2), Decimal("0.40")),  # recorded in the unit before
            (trade("t4", "0.20", later - timedelta(hours=1)), Decimal("0.2")),
        ]
        assert await uow.trades.record(batch) == {"t3", "t4"}
        assert await uow.trades.record([]) == set()
        # t1 is older than 24 h before the latest trade: 3 x 0.50 + 1 x 0.20 over 4 GPUs.
        assert await uow.trades.recent([on_demand], day) == {
            on_demand: RecentTrades(later, Decimal("0.425000"))
        }
        assert await uow.trades.books() == [on_demand]


async def roll_each(uow: PricingUnitOfWork, *trades: tuple[TradeExecuted, Decimal]) -> None:
    """Roll trades one at a time, as a unit per trade would."""
    for one in trades:
        await uow.candles.roll(rolls([one]))


async def test_candles_keep_the_open_extend_high_and_low_and_close_on_the_latest(
    units: Units,
) -> None:
    rows = [
        ("t1", "0.40", 0, 2),
        ("t2", "0.50", 15, 1),
        ("t3", "0.30", 35, 1),
        ("t4", "0.46", 65, 2),
    ]
    late = trade("t0", "0.10", AT - timedelta(seconds=4))
    async with units() as uow:
        await roll_each(
            uow,
            *(
                (trade(trade_id, price, AT + timedelta(seconds=seconds), gpus), Decimal(price))
                for trade_id, price, seconds, gpus in rows
            ),
        )
        await roll_each(uow, (late, Decimal("0.10")))
        await uow.commit()
    hour = datetime(2026, 11, 28, 10, tzinfo=UTC)
    async with units() as uow:
        book, other = ("rtx-4090", "on_demand"), ("rtx-4090", "interruptible")
        latest = await uow.candles.latest([book, other], 200)
        assert latest[book][Interval.HOUR] == [
            Candle(
                hour,
                Decimal("0.40"),
                Decimal("0.50"),
                Decimal("0.10"),
                Decimal("0.46"),
                7,
                Decimal("2.62"),
            )
        ]
        minutes = latest[book][Interval.MINUTE]
        assert [(c.start, c.close, c.gpus) for c in minutes] == [
            (hour, Decimal("0.30"), 5),
            (hour + timedelta(minutes=1), Decimal("0.46"), 2),
        ]
        newest = (await uow.candles.latest([book], 1))[book][Interval.MINUTE]
        assert [c.start for c in newest] == [hour + timedelta(minutes=1)]
        assert latest[other] == {i: [] for i in Interval}


def on(
    tier: str, trade_id: str, price: str, seconds: int, gpus: int
) -> tuple[TradeExecuted, Decimal]:
    at = AT + timedelta(seconds=seconds)
    body = trade_executed(
        trade_id=trade_id, price=price, gpus=gpus, currency=Currency.EUR, executed_at=at, tier=tier
    )
    return body, Decimal(price)


async def test_a_batch_rolled_at_once_makes_the_candles_trade_by_trade_makes(
    units: Units,
) -> None:
    """Out of order, ties on the time, a candle an earlier unit opened: both books agree."""
    held = [("t1", "0.40", 10, 2), ("t2", "0.50", 30, 1)]
    batch = [
        ("t3", "0.35", 20, 1),  # older than the held close: high/low/volume only
        ("t4", "0.60", 90, 3),  # the next minute, arriving before an older one of it
        ("t5", "0.20", 70, 1),
        ("t6", "0.45", 90, 1),  # ties t4's time, arrives later: the close
        ("t7", "0.30", 3_600, 1),  # the next hour
    ]
    async with units() as uow:
        for tier in ("on_demand", "interruptible"):
            await roll_each(uow, *(on(tier, *row) for row in held))
        await uow.commit()
    async with units() as uow:
        await uow.candles.roll(rolls(on("on_demand", *row) for row in batch))
        await roll_each(uow, *(on("interruptible", *row) for row in batch))
        await uow.commit()
    hour = datetime(2026, 11, 28, 10, tzinfo=UTC)
    async with units() as uow:
        batched, each = ("rtx-4090", "on_demand"), ("rtx-4090", "interruptible")
        latest = await uow.candles.latest([batched, each], 200)
        assert latest[batched] == latest[each]
        assert [
            (c.start, c.open, c.high, c.low, c.close, c.gpus)
            for c in latest[batched][Interval.HOUR]
        ] == [
            (hour, Decimal("0.40"), Decimal("0.60"), Decimal("0.20"), Decimal("0.45"), 9),
            (hour + timedelta(hours=1), *(Decimal("0.30"),) * 4, 1),
        ]
        minutes = latest[batched][Interval.MINUTE]
        assert [(c.open, c.close, c.gpus) for c in minutes[:2]] == [
            (Decimal("0.40"), Decimal("0.50"), 4),
            (Decimal("0.60"), Decimal("0.45"), 5),
        ]
        assert latest[batched][Interval.DAY][0].notional == Decimal("4.40")


async def test_an_offer_with_an_interruptible_price_is_held_in_both_of_its_books(
    units: Units,
) -> None:
    two = offer("o1").model_copy(
        update={"interruptible_price_per_gpu_hour": Decimal("0.25"), "gpu": "h100-sxm"}
    )
    single = offer("o2", gpu="h100-sxm")
    async with units() as uow:
        for o in (two, single):
            await uow.offers.save(o, Decision(1, OfferStatus.ACCEPTED), AT)
        await uow.commit()
    async with units() as uow:
        assert await uow.offers.books() == [
            ("h100-sxm", "interruptible"),
            ("h100-sxm", "on_demand"),
        ]
        assert await uow.offers.set_book_state("o1", OfferStatus.LIVE, 2, AT) == two
        await uow.offers.set_book_state("o2", OfferStatus.LIVE, 4, AT)
        await uow.commit()
    async with units() as uow:
        assert await uow.offers.on_book("h100-sxm", "on_demand") == [(two, 2), (single, 4)]
        assert await uow.offers.on_book("h100-sxm", "interruptible") == [(two, 2)]
        # Exhausted: off both books, and back in both once live with free GPUs again.
        await uow.offers.set_book_state("o1", OfferStatus.EXHAUSTED, 0, AT)
        assert await uow.offers.on_book("h100-sxm", "interruptible") == []
        await uow.offers.set_book_state("o1", OfferStatus.LIVE, 1, AT)
        await uow.commit()
    async with units() as uow:
        assert await uow.offers.on_book("h100-sxm", "interruptible") == [(two, 1)]
        assert await uow.offers.on_book("h100-sxm", "on_demand") == [(two, 1), (single, 4)]
        # A change that gives the other offer an interruptible price puts it there too.
        both = single.model_copy(update={"interruptible_price_per_gpu_hour": Decimal("0.30")})
        await uow.offers.save(both, Decision(2, OfferStatus.ACCEPTED), AT)
        await uow.commit()
    async with units() as uow:
        assert await uow.offers.on_book("h100-sxm", "interruptible") == [(two, 1), (both, 4)]


async def test_an_offer_keeps_its_provisioning_timeout_through_its_revisions(
    units: Units,
) -> None:
    slow = offer("o1").model_copy(update={"provisioning_timeout_seconds": 900})
    async with units() as uow:
        await uow.offers.save(slow, Decision(1, OfferStatus.ACCEPTED), AT)
        await uow.commit()
    repriced = slow.model_copy(update={"price_per_gpu_hour": Decimal("0.35")})
    async with units() as uow:
        known = await uow.offers.get("o1")
        assert known is not None
        assert known.offer.provisioning_timeout_seconds == 900
        await uow.offers.save(repriced, Decision(2, OfferStatus.ACCEPTED), AT)
        await uow.commit()
    async with units() as uow:
        assert await uow.offers.get("o1") == KnownOffer(repriced, 2, OfferStatus.ACCEPTED)
        assert await uow.offers.set_book_state("o1", OfferStatus.LIVE, 4, AT) == repriced
        await uow.commit()


def counts(ready: int, failed: int = 0, reclaimed: int = 0) -> ReliabilityCounts:
    return ReliabilityCounts(ready_in_time=ready, failed=failed, reclaimed=reclaimed)


async def test_sellers_counts_follow_the_reliability_rule(units: Units) -> None:
    async with units() as uow:
        assert await uow.reliability.keep({"s1": counts(3, 1), "s2": counts(1)}) == {"s1", "s2"}
        assert await uow.reliability.keep({}) == set()
        await uow.commit()
    async with units() as uow:
        # Fewer counted (a late event of another offer) and the same again change nothing.
        kept = {"s1": counts(2, 0, 1), "s2": counts(1), "s3": counts(0, 1)}
        assert await uow.reliability.keep(kept) == {"s3"}
        await uow.commit()
    async with units() as uow:
        assert await uow.reliability.keep({"s2": counts(5)}) == {"s2"}  # left without commit
    async with units() as uow:
        assert await uow.reliability.keep({"s1": counts(3, 2)}) == {"s1"}
        assert await uow.reliability.of(["s1", "s2", "s3", "s4"]) == {
            "s1": counts(3, 2),
            "s2": counts(1),
            "s3": counts(0, 1),
        }
        assert await uow.reliability.of([]) == {}


async def test_the_books_of_a_seller_are_those_of_its_open_offers(units: Units) -> None:
    def of(offer_id: str, seller_id: str, **fields: Any) -> OfferSubmitted:
        return offer_submitted(offer_id, seller_id=seller_id, **fields)

    two_tiers = of("o1", "s1", interruptible_price_per_gpu_hour=Decimal("0.20"))
    async with units() as uow:
        accepted = Decision(1, OfferStatus.ACCEPTED)
        for o in (two_tiers, of("o2", "s1", gpu="h100-sxm"), of("o3", "s2"), of("o4", "s3")):
            await uow.offers.save(o, accepted, AT)
        await uow.offers.save(of("o5", "s2", gpu="h100-sxm"), accepted, AT)
        await uow.offers.save(of("o6", "s4"), Decision(1, OfferStatus.REJECTED, "x"), AT)
        await uow.offers.set_book_state("o2", OfferStatus.EXHAUSTED, 0, AT)
        await uow.offers.set_book_state("o3", OfferStatus.LIVE, 4, AT)
        await uow.offers.set_book_state("o4", OfferStatus.WITHDRAWN, 0, AT)
        await uow.offers.set_book_state("o5", OfferStatus.EXPIRED, 0, AT)
        await uow.commit()
    async with units() as uow:
        # Accepted (on its way), live and exhausted offers count; closed ones do not.
        assert await uow.offers.books_of_sellers(["s1", "s2", "s3", "s4", "s5"]) == {
            "s1": [
                ("h100-sxm", "on_demand"),
                ("rtx-4090", "interruptible"),
                ("rtx-4090", "on_demand"),
            ],
            "s2": [("rtx-4090", "on_demand")],
        }
        assert await uow.offers.books_of_sellers([]) == {}
