"""Leases on the real stack: trades in, charges on the ledger, lease events out.

Billing runs in-process with a clock 30 times faster than the wall clock (a 60 s
settlement period passes in 2 s). Orders and credits are published as the gateway would,
trades as the book would, rates as pricing's loader would; results are read back from
Kafka (``billing.leases``) and the ledger.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import asyncpg
import pytest

from gpux_billing.adapters.postgres.ledger import PostgresLedger
from gpux_billing.domain.amounts import convert
from gpux_billing.domain.ledger import AccountKind
from gpux_contracts.fx import RatePublished
from gpux_contracts.ids import new_id
from gpux_contracts.leases import LeaseStopRequested
from gpux_contracts.money import Currency, canonical, from_micros
from gpux_contracts.orders import OrderPlaced, TradeExecuted
from gpux_contracts.topics import (
    BILLING_COMMANDS,
    BILLING_LEDGER,
    FX_RATES,
    MARKET_TRADES,
    ORDERS_BOOK,
    ORDERS_COMMANDS,
    ORDERS_STATUS,
    PRICING_BEST_ASKS,
)
from gpux_devinfra.testing.kafka import publish, published
from gpux_devinfra.testing.payloads import (
    GPU,
    best_ask_changed,
    order_placed,
    trade_executed,
)
from gpux_platform.settings import GpuxSettings

from .lease_feed import balance, envelope, fast_billing, funded_order, lease_events, of_type, send

SPEED = 30
RATE_AT = datetime.now(UTC).replace(minute=0, second=0, microsecond=0) - timedelta(hours=1)
"""The USD rate's time: recent, as billing funds no hold on a rate older than its maximum age
(7 days), whatever day the suite runs."""


@pytest.fixture(scope="module")
async def billing(module_settings: GpuxSettings) -> AsyncIterator[GpuxSettings]:
    async with fast_billing(module_settings, SPEED) as settings:
        # Billing learns the USD rate before any lease needs it (as pricing's loader does).
        rate = RatePublished(
            base=Currency.USD,
            quote=Currency.EUR,
            rate=Decimal("0.92"),
            as_of=RATE_AT,
            source="test",
        )
        await send(settings, FX_RATES, "USD/EUR", rate)
        yield settings


def where(field: str, value: str) -> Callable[[dict[str, Any]], bool]:
    """Whether a record's payload has ``value`` in ``field``."""
    return lambda body: bool(body["payload"][field] == value)


def transfers(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The transfers a ``billing.ledger`` record announces (an aggregated one: several)."""
    payload = body["payload"]
    if body["event_type"] == "ledger.batch_posted":
        return list(payload["transfers"])
    return [payload]


async def leased(
    settings: GpuxSettings, wallet: Currency, credit: str, *, limit: str, **terms: Any
) -> TradeExecuted:
    """A new buyer with ``credit`` in its ``wallet`` has an order for ``terms["gpus"]`` funded
    at ``limit``; a new seller's trade of it (``gpus``, ``price``, ``billing``) opens a lease."""
    buyer, seller = f"b{new_id()}", f"s{new_id()}"
    order_id = await funded_order(settings, buyer, wallet, credit, gpus=terms["gpus"], limit=limit)
    executed = trade_executed(
        order_id=order_id,
        offer_id=new_id(),
        buyer_id=buyer,
        seller_id=seller,
        executed_at=settings.clock().now(),
        **terms,
    )
    await send(settings, MARKET_TRADES, GPU, executed, "matching")
    return executed


async def stop(settings: GpuxSettings, executed: TradeExecuted, after: timedelta) -> None:
    request = LeaseStopRequested(
        lease_id=executed.trade_id,
        buyer_id=executed.buyer_id,
        requested_at=executed.executed_at + after,
    )
    await send(settings, BILLING_COMMANDS, executed.buyer_id, request)


def charges(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The lease's charges in either form (a trade's or a stop's ``lease.charged``, the
    settlement loop's ``leases.settled`` item), in the order of the periods they reached."""
    found = of_type(events, "lease.charged") + of_type(events, "leases.settled")
    return sorted(found, key=lambda c: int(c["totals"]["period"]))


async def run_per_second_lease_for_90s(
    billing: GpuxSettings, wallet: Currency
) -> tuple[TradeExecuted, list[dict[str, Any]]]:
    executed = await leased(
        billing, wallet, "10", limit="0.60", gpus=2, price="0.50", billing="second"
    )
    # The settlement loop charges the first minute by itself (aggregated with its batch).
    events = await lease_events(billing, executed.trade_id, "leases.settled")
    assert of_type(events, "lease.opened"), events
    # Now stop at 90 s.
    await stop(billing, executed, timedelta(seconds=90))
    events = await lease_events(billing, executed.trade_id, "lease.ended")
    # Both charges in the offer's currency: the first minute, then the 30 s up to the stop.
    assert [c["amount"] for c in charges(events)] == ["0.016667", "0.008333"]
    return executed, events


async def test_per_second_lease_stopped_after_90_s_bills_exactly_that(
    billing: GpuxSettings, pool: asyncpg.Pool
) -> None:
    executed, events = await run_per_second_lease_for_90s(billing, Currency.USD)
    (ended,) = of_type(events, "lease.ended")
    assert ended["reason"] == "stopped"
    assert ended["totals"]["total_charged"] == "0.025"
    ended_at = datetime.fromisoformat(ended["ended_at"])
    assert ended_at == executed.executed_at + timedelta(seconds=90)
    buyer, seller = executed.buyer_id, executed.seller_id
    # 10 USD credited, 1.20 held for the order, the lease paid 0.025 of it, the rest released.
    assert await balance(pool, buyer, Currency.USD, AccountKind.AVAILABLE) == 9_975_000
    assert await balance(pool, buyer, Currency.USD, AccountKind.HELD) == 0
    # The seller's earnings equal the charges minus the 10 % fee, to the unit.
    assert await balance(pool, seller, Currency.USD, AccountKind.SELLER_PAYABLE) == 22_500
    assert ended["totals"]["total_seller"] == "0.0225"
    assert ended["totals"]["total_fee"] == "0.0025"


async def test_a_euro_wallet_pays_usd_charges_at_the_stored_rate(
    billing: GpuxSettings, pool: asyncpg.Pool
) -> None:
    executed, events = await run_per_second_lease_for_90s(billing, Currency.EUR)
    assert {c["fx_rate"] for c in charges(events)} == {"0.92"}
    rate = Decimal("0.92")
    paid = convert(16_667, rate) + convert(8_333, rate)
    (ended,) = of_type(events, "lease.ended")
    assert ended["totals"]["total_paid"] == format(canonical(from_micros(paid)), "f")
    buyer = executed.buyer_id
    assert await balance(pool, buyer, Currency.EUR, AccountKind.AVAILABLE) == 10_000_000 - paid

    # The ledger stores the rate and its time on each charge transfer.
    def ours(transfer: dict[str, Any]) -> bool:
        return str(transfer["transfer_id"]).startswith(f"charge:{executed.trade_id}:")

    found = await published(
        billing, BILLING_LEDGER, lambda b: any(ours(t) for t in transfers(b)), settle_s=0.5
    )
    ledger = [t for r in found for t in transfers(r.body) if ours(t)]
    assert len({t["transfer_id"] for t in ledger}) == 2  # both charges
    assert {t["fx_rate"] for t in ledger} == {"0.92"}
    assert {t["fx_rate_at"] for t in ledger} == {RATE_AT.strftime("%Y-%m-%dT%H:%M:%SZ")}


async def test_an_hourly_lease_stopped_after_61_minutes_bills_two_hours(
    billing: GpuxSettings, pool: asyncpg.Pool
) -> None:
    executed = await leased(
        billing, Currency.USD, "20", limit="2.50", gpus=1, price="2.00", billing="hour"
    )
    buyer, seller = executed.buyer_id, executed.seller_id
    # Trades and stops travel on different topics: stop a lease billing has opened.
    assert of_type(await lease_events(billing, executed.trade_id, "lease.opened"), "lease.opened")
    await stop(billing, executed, timedelta(minutes=61))
    events = await lease_events(billing, executed.trade_id, "lease.ended")
    assert [c["amount"] for c in charges(events)] == ["2.00", "2.00"]
    (ended,) = of_type(events, "lease.ended")
    assert ended["totals"]["total_charged"] == "4.00"
    assert await balance(pool, buyer, Currency.USD, AccountKind.AVAILABLE) == 16_000_000
    assert await balance(pool, seller, Currency.USD, AccountKind.SELLER_PAYABLE) == 3_600_000


async def test_a_buyer_out_of_money_is_warned_then_the_lease_ends(
    billing: GpuxSettings, pool: asyncpg.Pool
) -> None:
    # 0.10 USD lasts 3 minutes and 20 s at 1.80 USD an hour (0.03 a minute).
    executed = await leased(
        billing, Currency.USD, "0.10", limit="0.01", gpus=1, price="1.80", billing="second"
    )
    buyer = executed.buyer_id
    events = await lease_events(billing, executed.trade_id, "lease.ended", timeout_s=40)
    kinds = [e["event_type"] for e in events]
    assert kinds.index("lease.low_balance") < kinds.index("lease.ended")
    (ended,) = of_type(events, "lease.ended")
    assert ended["reason"] == "insufficient_funds"
    assert ended["totals"]["total_charged"] == "0.09"  # three whole minutes; a fourth won't fit
    assert await balance(pool, buyer, Currency.USD, AccountKind.AVAILABLE) == 10_000
    async with pool.acquire() as conn:
        audit = await PostgresLedger(conn).verify()
    assert not audit.discrepancies
    assert not audit.below_floor


async def place(settings: GpuxSettings, order: OrderPlaced) -> dict[str, Any]:
    """Publish an order; return billing's answer (order.funded or order.status_changed)."""
    await send(settings, ORDERS_COMMANDS, GPU, order)

    def ours(body: dict[str, Any]) -> bool:
        payload = body["payload"]
        return bool(payload.get("order", payload).get("order_id") == order.order_id)

    funded = await published(settings, ORDERS_BOOK, ours, settle_s=0.2, timeout_s=4)
    if funded:
        return funded[0].body
    rejected = await published(settings, ORDERS_STATUS, ours, settle_s=0.2)
    assert rejected, "billing answered nothing"
    return rejected[0].body


def buy(buyer: str, currency: Currency, price: str | None, **extra: Any) -> OrderPlaced:
    return order_placed(buyer_id=buyer, gpus=2, price=price, currency=currency, **extra)


async def test_a_market_order_without_a_cap_holds_and_is_capped_at_the_best_ask_plus_slippage(
    billing: GpuxSettings, pool: asyncpg.Pool
) -> None:
    buyer = f"b{new_id()}"
    await funded_order(billing, buyer, Currency.USD, "50", gpus=1, limit="0.10")
    quotes = [
        best_ask_changed(
            {Currency.USD: usd, Currency.EUR: eur},
            billing.clock().now(),
            tier=tier,
            offer_id=new_id(),
            gpus=4,
        )
        for tier, usd, eur in (("on_demand", "2.00", "1.84"), ("interruptible", "1.20", "1.104"))
    ]
    clock = billing.clock()
    await publish(
        billing,
        PRICING_BEST_ASKS,
        [(f"{GPU}|{q.tier}|*", envelope(clock, q, "pricing")) for q in quotes],
    )
    await asyncio.sleep(1)  # billing reads the quotes (another consumer than the orders')
    answer = await place(billing, buy(buyer, Currency.USD, None))
    assert answer["event_type"] == "order.funded", answer
    # The cheapest tier's best ask (1.20) plus 5 %: 1.26 per GPU-hour, 2 GPUs for an hour.
    assert answer["payload"]["order"]["max_price_per_gpu_hour"] == "1.26"
    assert answer["payload"]["held"] == "2.52"


async def test_an_order_in_dollars_is_held_in_the_euro_wallet_at_the_current_rate(
    billing: GpuxSettings, pool: asyncpg.Pool
) -> None:
    buyer = f"b{new_id()}"
    await funded_order(billing, buyer, Currency.EUR, "50", gpus=1, limit="0.10")
    answer = await place(billing, buy(buyer, Currency.USD, "1.50", wallet_currency=Currency.EUR))
    assert answer["event_type"] == "order.funded", answer
    assert answer["payload"]["held_currency"] == "EUR"
    assert answer["payload"]["held"] == "2.76"  # 3.00 USD at 0.92
    assert await balance(pool, buyer, Currency.EUR, AccountKind.HELD) == 100_000 + 2_760_000


async def test_a_stale_rate_funds_no_hold_in_another_currency(
    billing: GpuxSettings, pool: asyncpg.Pool
) -> None:
    old = RatePublished(
        base=Currency.GBP,
        quote=Currency.EUR,
        rate=Decimal("1.18"),
        as_of=billing.clock().now() - timedelta(days=30),
        source="test",
    )
    await send(billing, FX_RATES, "GBP/EUR", old, "pricing")
    buyer = f"b{new_id()}"
    await funded_order(billing, buyer, Currency.EUR, "50", gpus=1, limit="0.10")
    await asyncio.sleep(1)  # billing reads the rate
    answer = await place(billing, buy(buyer, Currency.GBP, "1.00", wallet_currency=Currency.EUR))
    assert answer["payload"]["status"] == "rejected"
    assert answer["payload"]["reason"] == "fx_rate_stale"
