"""The billing service in-process: commands in from the gateway, ledger and events out.

Commands are published as the gateway would (producer ``gateway``) and order statuses as
the book would (producer ``matching``); the ledger is read from PostgreSQL, the events
back from Kafka, the balances from Redis.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from decimal import Decimal
from typing import Any

import asyncpg
import pytest
from redis.asyncio import Redis

from gpux_billing.adapters.postgres.ledger import PostgresLedger
from gpux_billing.bootstrap import SPEC
from gpux_billing.domain.ledger import AccountKey, AccountKind
from gpux_contracts.billing import TopupConfirmRequested, TopupRequested
from gpux_contracts.events import Envelope, Payload, wrap
from gpux_contracts.ids import new_id
from gpux_contracts.money import Currency
from gpux_contracts.orders import (
    OrderCancelRequested,
    OrderPlaced,
    OrderStatus,
    OrderType,
    TimeInForce,
)
from gpux_contracts.topics import (
    BILLING_BALANCES,
    BILLING_COMMANDS,
    ORDERS_BOOK,
    ORDERS_COMMANDS,
    ORDERS_STATUS,
    Topic,
)
from gpux_devinfra.testing import waiting
from gpux_devinfra.testing.kafka import publish, published
from gpux_devinfra.testing.payloads import GPU, credit_requested, order_placed, order_status
from gpux_devinfra.testing.services import running
from gpux_platform.clock import SystemClock
from gpux_platform.redis_keys import BALANCES
from gpux_platform.settings import GpuxSettings


@pytest.fixture(scope="module")
async def billing(module_settings: GpuxSettings) -> AsyncIterator[GpuxSettings]:
    async with running(SPEC, module_settings, dev_topups=True) as (_, settings):
        yield settings


def envelope(payload: Payload, producer: str = "gateway") -> Envelope[Any]:
    return wrap(payload, producer=producer, occurred_at=SystemClock().now())


async def records(
    settings: GpuxSettings, topic: Topic, match: Callable[[dict[str, Any]], bool], count: int
) -> list[dict[str, Any]]:
    """The records of a topic (from the earliest offset) that match, once ``count`` are in."""
    found = await published(settings, topic, match, settle_s=1.5, timeout_s=30, at_least=count)
    return [record.body for record in found]


async def wallet(pool: asyncpg.Pool, owner: str, currency: str) -> tuple[int, int]:
    """(available, held) micro-units."""
    async with pool.acquire() as conn:
        available = await PostgresLedger(conn).balance(
            AccountKey(owner, Currency(currency), AccountKind.AVAILABLE)
        )
        held = await PostgresLedger(conn).balance(
            AccountKey(owner, Currency(currency), AccountKind.HELD)
        )
    return available, held


async def eventually(probe: Callable[[], Awaitable[Any]], expected: Any) -> None:
    await waiting.eventually(probe, lambda value: value == expected, what=f"{expected!r}")


def topup(account: str, amount: str, provider: str = "dev", topup_id: str | None = None) -> Any:
    return TopupRequested(
        topup_id=topup_id or new_id(),
        account_id=account,
        amount=Decimal(amount),
        currency=Currency.USD,
        provider=provider,
    )


def order(buyer: str, gpus: int, price: str | None, kind: OrderType = OrderType.LIMIT) -> Any:
    return order_placed(
        buyer_id=buyer, gpus=gpus, price=price, type=kind, time_in_force=TimeInForce.GTC
    )


async def test_dev_topup_books_once_and_publishes_the_balance(
    billing: GpuxSettings, pool: asyncpg.Pool
) -> None:
    buyer = f"b{new_id()}"
    command = envelope(topup(buyer, "25.50"))
    # The same command twice (a redelivery) and a credit: 25.50 + 4.50 once each.
    credit = credit_requested(buyer, "4.50", credit_id=new_id(), reference="goodwill")
    await publish(
        billing,
        BILLING_COMMANDS,
        [(buyer, command), (buyer, command), (buyer, envelope(credit))],
    )
    await eventually(lambda: wallet(pool, buyer, "USD"), (30_000_000, 0))
    changes = await records(
        billing, BILLING_BALANCES, lambda b: b["payload"]["account_id"] == buyer, 2
    )
    assert [(c["payload"]["available"], c["payload"]["held"]) for c in changes] == [
        ("25.50", "0.00"),
        ("30.00", "0.00"),
    ]
    assert {c["event_type"] for c in changes} == {"balance.changed"}
    redis = Redis.from_url(billing.redis_url)
    try:
        cached = await redis.hget(billing.redis_key(BALANCES, buyer), "USD")
    finally:
        await redis.aclose()
    assert cached is not None
    assert json.loads(cached)["available"] == "30.00"
    async with pool.acquire() as conn:
        assert (await PostgresLedger(conn).verify()).ok


async def test_manual_topup_waits_for_the_admin(billing: GpuxSettings, pool: asyncpg.Pool) -> None:
    buyer = f"b{new_id()}"
    requested = topup(buyer, "10", provider="manual")
    await publish(billing, BILLING_COMMANDS, [(buyer, envelope(requested))])
    await eventually(lambda: _topup_status(pool, requested.topup_id), "requested")
    assert await wallet(pool, buyer, "USD") == (0, 0)
    confirm = TopupConfirmRequested(topup_id=requested.topup_id, confirmed_by="admin")
    await publish(billing, BILLING_COMMANDS, [(requested.topup_id, envelope(confirm))])
    await eventually(lambda: wallet(pool, buyer, "USD"), (10_000_000, 0))
    # A confirmation that comes before its request is kept until the request arrives.
    early = topup(buyer, "1", provider="manual")
    confirm_early = TopupConfirmRequested(topup_id=early.topup_id, confirmed_by="admin")
    await publish(billing, BILLING_COMMANDS, [(early.topup_id, envelope(confirm_early))])
    await eventually(lambda: _topup_status(pool, early.topup_id), "requested")
    await publish(billing, BILLING_COMMANDS, [(buyer, envelope(early))])
    await eventually(lambda: wallet(pool, buyer, "USD"), (11_000_000, 0))


async def _topup_status(pool: asyncpg.Pool, topup_id: str) -> str | None:
    value = await pool.fetchval("SELECT status FROM billing.topups WHERE id = $1", topup_id)
    return None if value is None else str(value)


async def assert_rejected(billing: GpuxSettings, too_big: OrderPlaced, market: OrderPlaced) -> None:
    """Billing answered both orders ``rejected``: short of funds, and no offers to cap at."""
    ours = {too_big.order_id, market.order_id}
    statuses = await records(billing, ORDERS_STATUS, lambda b: b["payload"]["order_id"] in ours, 2)
    by_order = {s["payload"]["order_id"]: s["payload"] for s in statuses}
    assert len(statuses) == 2
    assert by_order[too_big.order_id]["status"] == "rejected"
    assert by_order[too_big.order_id]["reason"] == "insufficient_funds"
    assert by_order[too_big.order_id]["shortfall"] == "2.50"
    assert by_order[too_big.order_id]["shortfall_currency"] == "USD"
    assert by_order[market.order_id]["reason"] == "no_offers"  # no cap and nothing to take


async def test_orders_are_funded_rejected_cancelled_and_released(
    billing: GpuxSettings, pool: asyncpg.Pool
) -> None:
    buyer = f"b{new_id()}"
    await publish(billing, BILLING_COMMANDS, [(buyer, envelope(topup(buyer, "10.00")))])
    await eventually(lambda: wallet(pool, buyer, "USD"), (10_000_000, 0))

    funded = order(buyer, 2, "1.2500")  # holds 2.50
    too_big = order(buyer, 4, "2.5000")  # 10.00 > 7.50 left: short by 2.50
    market = order(buyer, 1, None, OrderType.MARKET)  # no cap: refused
    cancel = OrderCancelRequested(order_id=funded.order_id, buyer_id=buyer, gpu=GPU)
    placed = envelope(funded)
    await publish(
        billing,
        ORDERS_COMMANDS,
        [
            (GPU, placed),
            (GPU, placed),
            (GPU, envelope(too_big)),
            (GPU, envelope(market)),
            (GPU, envelope(cancel)),
        ],
    )
    await eventually(lambda: wallet(pool, buyer, "USD"), (7_500_000, 2_500_000))

    book = await records(
        billing,
        ORDERS_BOOK,
        lambda b: (
            b["payload"].get("order_id", b["payload"].get("order", {}).get("order_id"))
            == funded.order_id
        ),
        2,
    )
    assert [b["event_type"] for b in book] == ["order.funded", "order.cancel_requested"]
    assert book[0]["payload"]["held"] == "2.50"
    assert book[0]["payload"]["held_currency"] == "USD"
    assert book[0]["payload"]["order"]["order_id"] == funded.order_id
    assert book[1]["payload"] == cancel.model_dump(mode="json")

    await assert_rejected(billing, too_big, market)

    # The book cancels the order after 1 of its 2 GPUs filled: half the hold is released.
    cancelled = order_status(funded.order_id, OrderStatus.CANCELLED, buyer_id=buyer, filled=1)
    status_event = envelope(cancelled, producer="matching")
    await publish(billing, ORDERS_STATUS, [(GPU, status_event), (GPU, status_event)])
    await eventually(lambda: wallet(pool, buyer, "USD"), (8_750_000, 1_250_000))
    async with pool.acquire() as conn:
        assert (await PostgresLedger(conn).verify()).ok
