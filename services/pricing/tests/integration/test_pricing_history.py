"""Trades → pricing → OHLC candles and 24 h VWAP in PostgreSQL and Redis → the gateway.

The matching service is stood in for by publishing the `trade.executed` events it publishes
(producer `matching` on `market.trades`); pricing's handling, its tables, its Redis read
model and the gateway's history endpoint are real.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import asyncpg
import httpx
import pytest
from redis.asyncio import Redis

from gpux_contracts.events import Envelope
from gpux_contracts.money import Currency, quantize
from gpux_contracts.orders import TradeExecuted
from gpux_contracts.topics import MARKET_TRADES
from gpux_devinfra.testing import kafka, waiting
from gpux_devinfra.testing.http import get_until
from gpux_devinfra.testing.payloads import GPU
from gpux_devinfra.testing.services import Running, running, stack
from gpux_gateway.bootstrap import SPEC as GATEWAY
from gpux_platform.redis_keys import CANDLES
from gpux_platform.settings import GpuxSettings
from gpux_pricing.bootstrap import SPEC as PRICING

from ..history_trades import TRADES, trade

# Default FX file: 1 USD = 0.92 EUR, 1 GBP = 1.18 EUR.
IN_EUR = [Decimal("0.368"), Decimal("0.50"), Decimal("0.354"), Decimal("0.46")]


@pytest.fixture(scope="module")
async def gateway(module_settings: GpuxSettings) -> AsyncIterator[Running]:
    """Pricing and the gateway in this process; the gateway."""
    async with stack(module_settings, PRICING, GATEWAY) as served:
        yield served[GATEWAY.name]


async def publish(settings: GpuxSettings, envelopes: list[Envelope[TradeExecuted]]) -> None:
    await kafka.publish(settings, MARKET_TRADES, [(GPU, e) for e in envelopes])


async def rates_loaded(settings: GpuxSettings) -> None:
    """Pricing publishes its FX file at start and consumes it; trades need those rates."""
    conn = await asyncpg.connect(settings.database_url.get_secret_value())
    try:

        async def rates() -> int:
            count: int = await conn.fetchval("SELECT count(*) FROM pricing.fx_rates")
            return count

        await waiting.eventually(rates, lambda n: n >= 2, what="FX rates in pricing", timeout_s=20)
    finally:
        await conn.close()


def ohlc(candle: dict[str, Any]) -> tuple[Decimal, Decimal, Decimal, Decimal, int]:
    return (
        Decimal(candle["open"]),
        Decimal(candle["high"]),
        Decimal(candle["low"]),
        Decimal(candle["close"]),
        candle["gpus"],
    )


async def first_history(client: httpx.AsyncClient, minute: str, hour: str) -> tuple[Any, Any]:
    """The history of the first four trades, checked; returns the hourly and minute bodies."""
    body = await get_until(
        client, hour, lambda b: bool(b["candles"]) and b["candles"][-1]["gpus"] == 6
    )
    assert (body["gpu"], body["tier"], body["interval"]) == (GPU, "on_demand", "1h")
    assert body["currency"] == "EUR"
    assert len(body["candles"]) == 1
    assert body["candles"][0]["start"] == "2026-11-28T10:00:00Z"
    assert ohlc(body["candles"][0]) == (
        Decimal("0.368"),
        Decimal("0.5"),
        Decimal("0.354"),
        Decimal("0.46"),
        6,
    )
    gpus = [g for *_, g, _ in TRADES]
    expected_vwap = quantize(
        sum((p * g for p, g in zip(IN_EUR, gpus, strict=True)), Decimal(0)) / sum(gpus)
    )
    assert expected_vwap == Decimal("0.418333")
    assert Decimal(body["vwap_24h"]) == expected_vwap

    minutes = (await client.get(minute)).json()
    assert [c["start"] for c in minutes["candles"]] == [
        "2026-11-28T10:00:00Z",
        "2026-11-28T10:01:00Z",
    ]
    assert ohlc(minutes["candles"][0]) == (
        Decimal("0.368"),
        Decimal("0.5"),
        Decimal("0.354"),
        Decimal("0.354"),
        4,
    )
    assert ohlc(minutes["candles"][1]) == (Decimal("0.46"),) * 4 + (2,)

    usd = (await client.get(f"/v1/prices/{GPU}/history?interval=1d&currency=USD")).json()
    assert usd["currency"] == "USD"
    assert Decimal(usd["candles"][0]["close"]) == Decimal("0.5")  # 0.46 EUR / 0.92
    return body, minutes


async def check_stored_trades(settings: GpuxSettings) -> None:
    """Every trade is kept once, as traded and in EUR."""
    conn = await asyncpg.connect(settings.database_url.get_secret_value())
    try:
        rows = await conn.fetch(
            "SELECT trade_id, price, traded_price, traded_currency FROM pricing.trades"
            " WHERE tier = 'on_demand' ORDER BY trade_id"
        )
    finally:
        await conn.close()
    assert [r["trade_id"] for r in rows] == ["t0", "t1", "t2", "t3", "t4"]
    assert rows[1]["price"] == Decimal("0.368")
    assert (rows[1]["traded_price"], rows[1]["traded_currency"]) == (Decimal("0.40"), "USD")


async def test_trades_roll_into_candles_and_vwap(gateway: Running) -> None:
    url, settings = gateway
    await rates_loaded(settings)
    envelopes = [trade(row, "on_demand") for row in TRADES]
    await publish(settings, envelopes)

    minute = f"/v1/prices/{GPU}/history?interval=1m&currency=EUR"
    hour = f"/v1/prices/{GPU}/history?interval=1h&currency=EUR&tier=on_demand"
    async with httpx.AsyncClient(base_url=url, timeout=30) as client:
        body, minutes = await first_history(client, minute, hour)

        # The same event again, the same trade under a new event id, and an older trade that
        # arrives late: none of them moves the close; only the late one adds volume.
        late = trade(
            ("t0", "0.10", Currency.EUR, 1, datetime(2026, 11, 28, 10, 0, 1, tzinfo=UTC)),
            "on_demand",
        )
        again = trade(TRADES[0], "on_demand")
        marker = trade(("m1", "0.40", Currency.EUR, 1, TRADES[3][4]), "interruptible")
        await publish(settings, [envelopes[0], again, marker])
        interruptible = f"/v1/prices/{GPU}/history?interval=1m&currency=EUR&tier=interruptible"
        await get_until(client, interruptible, lambda b: bool(b["candles"]))
        assert (await client.get(minute)).json() == minutes
        assert (await client.get(hour)).json() == body

        await publish(settings, [late])
        after = await get_until(
            client, hour, lambda b: b["candles"] and b["candles"][-1]["gpus"] == 7
        )
        assert ohlc(after["candles"][0]) == (
            Decimal("0.368"),
            Decimal("0.5"),
            Decimal("0.1"),
            Decimal("0.46"),
            7,
        )

    await check_stored_trades(settings)


@pytest.mark.usefixtures("gateway")
async def test_a_restart_rebuilds_the_candles_read_model(module_settings: GpuxSettings) -> None:
    settings = module_settings
    redis = Redis.from_url(settings.redis_url)
    keys = [k async for k in redis.scan_iter(match=settings.redis_key(CANDLES, "*"))]
    assert keys, "the first test wrote candles"
    before = {k: await redis.get(k) for k in keys}
    await redis.delete(*keys)
    async with running(PRICING, settings):
        after = {k: await redis.get(k) for k in keys}
    await redis.aclose()
    assert after == before
