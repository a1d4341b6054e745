"""What the settlement loop announces (``service.settlement``), on the memory unit of work:
aggregated by default (``leases.settled`` and ``ledger.batch_posted``, chunked), one event per
charge when the rules say ``per_lease``; ``balance.changed`` per wallet either way."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest

from gpux_billing.config import BillingSettings
from gpux_billing.domain.leases import Policy
from gpux_billing.domain.ledger import AccountKey, AccountKind
from gpux_billing.domain.rules import Rules
from gpux_billing.service import settlement
from gpux_contracts.money import Currency, from_micros
from gpux_contracts.settlement import MAX_ITEMS
from gpux_contracts.topics import MARKET_TRADES
from gpux_devinfra.testing.payloads import trade_executed

from .billing_desk import Desk

pytestmark = pytest.mark.unit

BUYERS = ("b1", "b2", "b3")


async def open_leases(desk: Desk, n: int, price: str = "0.60") -> list[str]:
    """``n`` per-second leases spread over ``BUYERS`` (no hold: they pay from available)."""
    for buyer in BUYERS:
        await desk.credit(buyer, "1000")
    trades = [
        trade_executed(
            trade_id=f"lease-{i:04d}",
            buyer_id=BUYERS[i % len(BUYERS)],
            seller_id=f"s{i % 2}",
            price=price,
            gpus=1 + i % 3,
            billing="second",
            executed_at=desk.uow.now,
        )
        for i in range(n)
    ]
    await desk.run(MARKET_TRADES, *trades)
    return [t.trade_id for t in trades]


async def tick(desk: Desk, limit: int = 5000) -> settlement.Tick:
    async with desk.uow:
        done = await settlement.settle_due(desk.uow, limit)
        await desk.uow.commit()
    return done


def kinds(desk: Desk) -> Counter[str]:
    return Counter(m.envelope.event_type for m in desk.uow.published)


def of_type(desk: Desk, event_type: str) -> list[dict[str, Any]]:
    return desk.published(event_type)


async def test_a_tick_announces_its_charges_per_chunk_not_per_lease(desk: Desk) -> None:
    n = 2 * MAX_ITEMS + 7
    leases = await open_leases(desk, n)
    before = kinds(desk)
    desk.clock.advance(timedelta(seconds=60))
    assert await tick(desk) == settlement.Tick(looked_at=n)
    made = kinds(desk) - before
    assert made == Counter({"leases.settled": 3, "ledger.batch_posted": 3, "balance.changed": 3})
    settled = of_type(desk, "leases.settled")
    assert [len(e["leases"]) for e in settled] == [MAX_ITEMS, MAX_ITEMS, 7]
    items = {i["lease_id"]: i for e in settled for i in e["leases"]}
    assert sorted(items) == leases
    for lease_id, item in items.items():
        lease = await desk.uow.leases.get(lease_id)
        assert lease is not None
        state = lease.state
        assert item["transfer_ids"] == [f"charge:{lease_id}:1"]
        assert Decimal(item["amount"]) == from_micros(state.charged_micros)
        assert Decimal(item["fee"]) + Decimal(item["seller_amount"]) == Decimal(item["amount"])
        assert item["totals"]["period"] == state.period == 1
        assert Decimal(item["totals"]["total_paid"]) == from_micros(state.paid_micros)
        assert Decimal(item["totals"]["total_seller"]) == from_micros(state.seller_micros)
    posted = [t for e in of_type(desk, "ledger.batch_posted") for t in e["transfers"]]
    assert sorted(t["transfer_id"] for t in posted) == sorted(
        i["transfer_ids"][0] for i in items.values()
    )
    balances = {b["account_id"]: b for b in of_type(desk, "balance.changed")[-3:]}
    for buyer in BUYERS:
        paid = sum(Decimal(i["paid"]) for i in items.values() if i["buyer_id"] == buyer)
        assert Decimal(balances[buyer]["available"]) == Decimal(1000) - paid
        assert await desk.funds(buyer) == (int((Decimal(1000) - paid) * 10**6), 0)
    assert (await desk.uow.ledger.verify()).ok


async def test_a_lease_charged_for_several_periods_in_one_step_is_one_item(desk: Desk) -> None:
    (lease_id,) = await open_leases(desk, 1, price="3.60")  # 0.001 USD a second
    desk.clock.advance(timedelta(seconds=185))
    await tick(desk)
    (event,) = of_type(desk, "leases.settled")
    (item,) = event["leases"]
    assert item["transfer_ids"] == [f"charge:{lease_id}:{k}" for k in (1, 2, 3)]
    assert (item["amount"], item["totals"]["total_charged"]) == ("0.18", "0.18")
    assert item["totals"]["period"] == 3
    start = desk.uow.now - timedelta(seconds=185)
    assert item["period_start"] == start.isoformat().replace("+00:00", "Z")
    assert item["period_end"] == (start + timedelta(seconds=180)).isoformat().replace("+00:00", "Z")
    (ledger,) = of_type(desk, "ledger.batch_posted")
    lines = {t["transfer_id"]: t["lines"] for t in ledger["transfers"]}
    assert sorted(lines) == item["transfer_ids"]
    seller = AccountKey("s0", Currency.USD, AccountKind.SELLER_PAYABLE)
    assert from_micros(await desk.uow.ledger.balance(seller)) == Decimal(item["seller_amount"])


async def test_ticks_never_share_an_event_id(desk: Desk) -> None:
    await open_leases(desk, 4)
    for _ in range(3):
        desk.clock.advance(timedelta(seconds=60))
        while (await tick(desk, limit=2)).looked_at == 2:  # two batches per tick, as the loop
            pass
    ids = [m.envelope.event_id for m in desk.uow.published]
    assert len(ids) == len(set(ids))
    assert kinds(desk)["leases.settled"] == 6
    assert sum(len(e["leases"]) for e in of_type(desk, "leases.settled")) == 12


async def test_the_per_lease_setting_announces_each_charge_as_before() -> None:
    desk = Desk(Rules(lease=Policy(batched_events=False), dev_topups=True))
    leases = await open_leases(desk, 5)
    before = kinds(desk)
    desk.clock.advance(timedelta(seconds=60))
    await tick(desk)
    made = kinds(desk) - before
    assert made == Counter({"lease.charged": 5, "ledger.posted": 5, "balance.changed": 3})
    charged = of_type(desk, "lease.charged")
    assert sorted(c["lease_id"] for c in charged) == leases
    assert all(c["transfer_id"] == f"charge:{c['lease_id']}:1" for c in charged)


async def test_a_trade_and_a_stop_announce_their_charges_per_lease(desk: Desk) -> None:
    await desk.credit("b1", "10")
    hourly = trade_executed(
        trade_id="lease-h", price="1.00", billing="hour", executed_at=desk.uow.now
    )
    await desk.run(MARKET_TRADES, hourly)
    assert [c["transfer_id"] for c in of_type(desk, "lease.charged")] == ["charge:lease-h:1"]
    assert "leases.settled" not in kinds(desk)


def test_the_setting_is_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    assert BillingSettings().rules().lease.batched_events
    monkeypatch.setenv("GPUX_SETTLEMENT_EVENTS", "per_lease")
    assert not BillingSettings().rules().lease.batched_events
