"""One contract for both ledgers: every test runs against the in-memory reference ledger and
the PostgreSQL adapter, so the fake cannot drift from the real thing.

PostgreSQL tests run inside a transaction that is rolled back, with owners of their own.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from datetime import timedelta, timezone
from decimal import Decimal
from typing import Any

import asyncpg
import pytest

from gpux_billing.adapters.memory.ledger import MemoryLedger
from gpux_billing.adapters.postgres.ledger import PostgresLedger
from gpux_billing.domain import transfers
from gpux_billing.domain.ledger import (
    AccountKey,
    AccountKind,
    FxQuote,
    InsufficientFunds,
    RejectionReason,
    Transfer,
    TransferKind,
    TransferMismatch,
)
from gpux_billing.domain.posting import Posted
from gpux_billing.domain.transfers import Sale
from gpux_billing.service.unit_of_work import Ledger
from gpux_contracts.money import Currency

from .contract_suite import NOW, Tagged

pytestmark = pytest.mark.integration  # the PostgreSQL side needs the database

USD, EUR = Currency.USD, Currency.EUR


@dataclass
class Store(Tagged):
    """A ledger under contract, its connection, and a fresh owner prefix."""

    ledger: Ledger
    conn: Any

    def owner(self, name: str) -> str:
        return self.id(name)

    def tid(self, name: str) -> str:
        return self.id(name)

    async def post(self, transfer: Transfer) -> Posted:
        # A savepoint, so a refused post leaves the test's transaction usable (as a handler would).
        async with self.conn.transaction() if self.conn is not None else contextlib.nullcontext():
            return await self.ledger.post(transfer)

    async def post_many(self, batch: list[Transfer]) -> list[Posted]:
        async with self.conn.transaction() if self.conn is not None else contextlib.nullcontext():
            return await self.ledger.post_many(batch)

    async def balance(self, owner: str, kind: str, currency: Currency = USD) -> int:
        return await self.ledger.balance(AccountKey(owner, currency, AccountKind(kind)))


@pytest.fixture
def store(contract_conn: asyncpg.Connection | None, contract_tag: str) -> Store:
    conn = contract_conn
    return Store(MemoryLedger() if conn is None else PostgresLedger(conn), conn, tag=contract_tag)


async def test_a_posted_transfer_moves_balances(store: Store) -> None:
    buyer = store.owner("b")
    posted = await store.post(transfers.topup(store.tid("t"), buyer, USD, 1_000_000, NOW))
    assert not posted.replayed
    assert await store.balance(buyer, "available") == 1_000_000
    assert await store.ledger.get(store.tid("t")) == posted.transfer
    assert await store.ledger.get(store.tid("nothing")) is None


async def test_an_identical_replay_is_a_no_op_returning_the_original(store: Store) -> None:
    buyer = store.owner("b")
    original = transfers.topup(store.tid("t"), buyer, USD, 500, NOW, reference="bank 42")
    await store.post(original)
    # The same facts written differently: entries in another order, the time in another zone.
    rewritten = Transfer(
        original.id,
        original.kind,
        original.entries[::-1],
        original.created_at.astimezone(timezone(timedelta(hours=2))),
        reference="bank 42",
    )
    for replay in (original, rewritten):
        again = await store.post(replay)
        assert again.replayed
        assert again.transfer.same_as(original)
    assert await store.balance(buyer, "available") == 500


@pytest.mark.parametrize(
    "change",
    [
        {"amount": 501},
        {"created_at": NOW + timedelta(microseconds=1)},
        {"reference": "other"},
        {"owner": "someone-else"},
    ],
)
async def test_the_same_id_with_other_fields_is_refused(
    store: Store, change: dict[str, Any]
) -> None:
    buyer = store.owner("b")
    await store.post(transfers.topup(store.tid("t"), buyer, USD, 500, NOW, reference="r"))
    fields: dict[str, Any] = {"amount": 500, "created_at": NOW, "reference": "r", "owner": buyer}
    fields.update(change)
    changed = transfers.topup(
        store.tid("t"), fields["owner"], USD, fields["amount"], fields["created_at"],
        reference=fields["reference"],
    )  # fmt: skip
    with pytest.raises(TransferMismatch) as refused:
        await store.post(changed)
    assert refused.value.reason is RejectionReason.ID_REUSED
    assert refused.value.original is not None
    assert refused.value.original.same_as(
        transfers.topup(store.tid("t"), buyer, USD, 500, NOW, reference="r")
    )
    assert await store.balance(buyer, "available") == 500


async def test_insufficient_funds_are_refused_with_the_shortfall(store: Store) -> None:
    buyer = store.owner("b")
    await store.post(transfers.topup(store.tid("t"), buyer, USD, 300, NOW))
    with pytest.raises(InsufficientFunds) as refused:
        await store.post(transfers.hold(store.tid("h"), buyer, USD, 301, NOW))
    assert refused.value.account == AccountKey(buyer, USD, AccountKind.AVAILABLE)
    assert (refused.value.balance_micros, refused.value.shortfall_micros) == (300, 1)
    assert refused.value.reason is RejectionReason.INSUFFICIENT_FUNDS
    assert await store.ledger.get(store.tid("h")) is None
    assert await store.balance(buyer, "available") == 300
    with pytest.raises(InsufficientFunds):
        await store.post(transfers.release(store.tid("r"), buyer, USD, 1, NOW))


async def test_hold_partial_charge_and_release(store: Store) -> None:
    buyer, seller = store.owner("b"), store.owner("s")
    await store.post(transfers.topup(store.tid("t"), buyer, USD, 1_000_000, NOW))
    await store.post(transfers.hold(store.tid("h"), buyer, USD, 400_000, NOW))
    revenue_before = await store.balance("platform", "platform_revenue")
    await store.post(transfers.charge(store.tid("c"), Sale(buyer, seller, USD, 25_000), 1000, NOW))
    await store.post(transfers.release(store.tid("r"), buyer, USD, 375_000, NOW))
    assert await store.balance(buyer, "available") == 975_000
    assert await store.balance(buyer, "held") == 0
    assert await store.balance(seller, "seller_payable") == 22_500
    assert await store.balance("platform", "platform_revenue") - revenue_before == 2_500
    assert [(b.account.kind, b.balance_micros) for b in await store.ledger.balances(buyer)] == [
        (AccountKind.AVAILABLE, 975_000),
        (AccountKind.HELD, 0),
    ]
    assert await store.ledger.balances(store.owner("nobody")) == []


async def test_an_fx_transfer_keeps_its_rate_and_timestamp(store: Store) -> None:
    buyer = store.owner("b")
    await store.post(transfers.topup(store.tid("t"), buyer, USD, 1_000, NOW))
    house_before = await store.balance("platform", "fx_house", EUR)
    quote = FxQuote(USD, EUR, Decimal("0.91750"), NOW - timedelta(seconds=42))
    fx = transfers.exchange(
        store.tid("x"),
        AccountKey(buyer, USD, AccountKind.AVAILABLE),
        AccountKey(buyer, EUR, AccountKind.AVAILABLE),
        1_000,
        quote,
        created_at=NOW,
    )
    await store.post(fx)
    stored = await store.ledger.get(store.tid("x"))
    assert stored is not None
    assert stored.fx == quote
    assert stored.fx.rate_text == "0.9175"
    assert await store.balance(buyer, "available", EUR) == 918  # 917.5 rounds to even
    # The FX house paid out euros: it may go negative.
    assert await store.balance("platform", "fx_house", EUR) - house_before == -918


async def test_a_batch_is_all_or_nothing(store: Store) -> None:
    buyer = store.owner("b")
    good = transfers.topup(store.tid("t1"), buyer, USD, 100, NOW)
    too_much = transfers.hold(store.tid("h1"), buyer, USD, 101, NOW)
    with pytest.raises(InsufficientFunds):
        await store.post_many([good, too_much])
    assert await store.ledger.get(good.id) is None
    hold = transfers.hold(store.tid("h2"), buyer, USD, 100, NOW)
    results = await store.post_many([good, hold, good])
    assert [r.replayed for r in results] == [False, False, True]
    assert [r.transfer.id for r in results] == [good.id, hold.id, good.id]
    assert [r.replayed for r in await store.post_many([hold, good])] == [True, True]
    assert await store.ledger.post_many([]) == []


async def test_a_refused_batch_leaves_nothing_behind(store: Store) -> None:
    buyer = store.owner("b")
    await store.post(transfers.topup(store.tid("t1"), buyer, USD, 100, NOW))
    new = transfers.topup(store.tid("t2"), buyer, USD, 5, NOW)
    changed = transfers.topup(store.tid("t1"), buyer, USD, 101, NOW)
    # No savepoint of the caller's here: a batch runs in its own.
    with pytest.raises(TransferMismatch):
        await store.ledger.post_many([new, changed])
    assert await store.ledger.get(new.id) is None
    with pytest.raises(InsufficientFunds):
        await store.ledger.post_many([new, transfers.hold(store.tid("h"), buyer, USD, 500, NOW)])
    assert await store.ledger.get(new.id) is None
    assert await store.balance(buyer, "available") == 100


async def test_the_statement_pages_newest_first(store: Store) -> None:
    buyer = store.owner("b")
    await store.post(transfers.topup(store.tid("t1"), buyer, USD, 1_000, NOW, reference="wire"))
    await store.post(transfers.topup(store.tid("t2"), buyer, EUR, 1_000, NOW))
    await store.post(transfers.hold(store.tid("h1"), buyer, USD, 400, NOW + timedelta(seconds=1)))
    await store.post(
        transfers.release(store.tid("r1"), buyer, USD, 100, NOW + timedelta(seconds=2))
    )
    first = await store.ledger.statement(buyer, USD, None, 3)
    assert [(line.transfer_id, line.account_kind, line.amount_micros) for line in first.lines] == [
        (store.tid("r1"), AccountKind.AVAILABLE, 100),
        (store.tid("r1"), AccountKind.HELD, -100),
        (store.tid("h1"), AccountKind.HELD, 400),
    ]
    assert first.next_cursor == first.lines[-1].seq
    second = await store.ledger.statement(buyer, USD, first.next_cursor, 3)
    assert [(line.transfer_id, line.amount_micros) for line in second.lines] == [
        (store.tid("h1"), -400),
        (store.tid("t1"), 1_000),
    ]
    assert second.next_cursor is None
    assert second.lines[-1].reference == "wire"
    assert second.lines[-1].transfer_kind is TransferKind.TOPUP
    assert second.lines[-1].created_at == NOW
    euros = await store.ledger.statement(buyer, EUR)
    assert [line.amount_micros for line in euros.lines] == [1_000]
    with pytest.raises(ValueError, match="limit"):
        await store.ledger.statement(buyer, USD, None, 0)


async def test_verify_finds_a_sound_ledger(store: Store) -> None:
    buyer, seller = store.owner("b"), store.owner("s")
    await store.post(transfers.topup(store.tid("t"), buyer, EUR, 90_000, NOW))
    await store.post(transfers.hold(store.tid("h"), buyer, EUR, 90_000, NOW))
    quote = FxQuote(USD, EUR, Decimal("0.9"), NOW)
    await store.post(
        transfers.charge(store.tid("c"), Sale(buyer, seller, USD, 100_000), 1000, NOW, fx=quote)
    )
    audit = await store.ledger.verify()
    assert audit.ok, audit
    assert await store.balance(seller, "seller_payable", USD) == 90_000
    assert await store.balance(buyer, "held", EUR) == 0
