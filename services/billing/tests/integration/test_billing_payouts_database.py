"""Seller payouts on PostgreSQL (``0009_payouts.sql``): the request and the confirmation through
billing's real unit of work, the two transfers balanced and on the seller's statement, the
payout row, replays moving nothing twice; the database's own floor on payouts in transit."""

from __future__ import annotations

from decimal import Decimal

import asyncpg
import pytest

from gpux_billing.adapters.postgres.ledger import PostgresLedger
from gpux_billing.domain import transfers
from gpux_billing.domain.ledger import (
    PLATFORM,
    AccountKey,
    AccountKind,
    Entry,
    InsufficientFunds,
    Transfer,
    TransferKind,
)
from gpux_billing.domain.rules import Rules
from gpux_billing.domain.transfers import Sale
from gpux_contracts.ids import new_id
from gpux_contracts.money import Currency
from gpux_contracts.payouts import PayoutConfirmRequested, PayoutRequested
from gpux_contracts.topics import BILLING_COMMANDS
from gpux_devinfra.testing.payloads import credit_requested
from gpux_platform.clock import ManualClock

from .billing_round_trips import NOW, apply, event, units

pytestmark = pytest.mark.integration

EUR = Currency.EUR


async def earn(pool: asyncpg.Pool, seller: str, buyer: str, amount_micros: int) -> None:
    """A charge of ``amount_micros`` from the buyer's available balance to the seller."""
    sale = Sale(buyer, seller, EUR, amount_micros)
    charge = transfers.charge(f"charge:{seller}", sale, 0, NOW, source=AccountKind.AVAILABLE)
    async with pool.acquire() as conn, conn.transaction():
        await PostgresLedger(conn).post(charge)


async def balance(pool: asyncpg.Pool, owner: str, kind: AccountKind) -> int:
    async with pool.acquire() as conn:
        return await PostgresLedger(conn).balance(AccountKey(owner, EUR, kind))


def outbox_count(event_type: str) -> str:
    return (
        "SELECT count(*) FROM billing.outbox WHERE key = $1"
        f" AND position('{event_type}' IN convert_from(body, 'UTF8')) > 0"
    )


async def test_a_payout_is_requested_confirmed_and_on_the_statement(
    billing_pool: asyncpg.Pool,
) -> None:
    tag = new_id()[-8:].lower()
    seller, buyer, payout_id = f"{tag}-s", f"{tag}-b", f"{tag}-p"
    real = units(billing_pool, Rules(), ManualClock(NOW))
    await apply(real, BILLING_COMMANDS, [event(credit_requested(buyer, "500", EUR))])
    await earn(billing_pool, seller, buyer, 80_000_000)
    paid_out_before = await balance(billing_pool, PLATFORM, AccountKind.PAID_OUT)
    request = PayoutRequested(
        payout_id=payout_id,
        seller_id=seller,
        currency=EUR,
        amount=Decimal("50.00"),
        destination="IBAN DE89 ...3000",
        requested_at=NOW,
    )
    confirm = PayoutConfirmRequested(
        payout_id=payout_id,
        seller_id=seller,
        confirmed_by="admin",
        reference="BANK-7",
        requested_at=NOW,
    )
    assert (await apply(real, BILLING_COMMANDS, [event(request)])).applied == 1
    row = await billing_pool.fetchrow("SELECT * FROM billing.payouts WHERE id = $1", payout_id)
    assert row is not None
    assert (row["status"], row["amount_micros"], row["reference"]) == (
        "pending",
        50_000_000,
        "manual",
    )
    assert await balance(billing_pool, seller, AccountKind.PAYOUTS_IN_TRANSIT) == 50_000_000
    await apply(real, BILLING_COMMANDS, [event(request), event(confirm), event(confirm)])
    await apply(real, BILLING_COMMANDS, [event(confirm)])
    row = await billing_pool.fetchrow("SELECT * FROM billing.payouts WHERE id = $1", payout_id)
    assert row is not None
    assert (row["status"], row["reference"], row["decided_by"]) == ("paid", "BANK-7", "admin")
    assert await balance(billing_pool, seller, AccountKind.SELLER_PAYABLE) == 30_000_000
    assert await balance(billing_pool, seller, AccountKind.PAYOUTS_IN_TRANSIT) == 0
    paid_out = await balance(billing_pool, PLATFORM, AccountKind.PAID_OUT)
    assert paid_out - paid_out_before == 50_000_000
    async with billing_pool.acquire() as conn:
        ledger = PostgresLedger(conn)
        page = await ledger.statement(seller, EUR)
        for transfer_id in (f"payout:{payout_id}", f"payout-paid:{payout_id}"):
            transfer = await ledger.get(transfer_id)
            assert transfer is not None
            assert sum(e.amount_micros for e in transfer.entries) == 0
        assert (await ledger.verify()).ok
    ids = [line.transfer_id for line in page.lines]
    assert ids.count(f"payout:{payout_id}") == 2  # payable out, in transit in
    assert ids.count(f"payout-paid:{payout_id}") == 1  # in transit out
    assert await billing_pool.fetchval(outbox_count("payout.status_changed"), seller) == 2
    ledger_events = "SELECT count(*) FROM billing.outbox WHERE key = ANY($1::text[])"
    keys = [f"payout:{payout_id}", f"payout-paid:{payout_id}"]
    assert await billing_pool.fetchval(ledger_events, keys) == 2


async def test_the_database_floors_payouts_in_transit_and_keeps_paid_out_the_platforms(
    billing_pool: asyncpg.Pool,
) -> None:
    tag = new_id()[-8:].lower()
    seller = f"{tag}-s"
    transit = AccountKey(seller, EUR, AccountKind.PAYOUTS_IN_TRANSIT)
    paid_out = AccountKey(PLATFORM, EUR, AccountKind.PAID_OUT)
    overdrawn = Transfer(
        f"payout-paid:{tag}",
        TransferKind.PAYOUT_PAID,
        (Entry(transit, -1_000_000), Entry(paid_out, 1_000_000)),
        NOW,
    )
    async with billing_pool.acquire() as conn, conn.transaction():
        with pytest.raises(asyncpg.PostgresError):
            await conn.execute(
                "INSERT INTO billing.accounts (owner, currency, kind) VALUES ('platform', 'EUR',"
                " 'payouts_in_transit')"
            )
    async with billing_pool.acquire() as conn:
        with pytest.raises(InsufficientFunds):
            async with conn.transaction():
                await PostgresLedger(conn).post(overdrawn)
