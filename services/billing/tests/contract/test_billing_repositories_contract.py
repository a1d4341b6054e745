"""One contract for billing's repositories: every test runs against the memory fakes and the
PostgreSQL adapters (in a transaction that is rolled back), so the fakes the service tests
use cannot drift from the real ones."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from decimal import Decimal

import asyncpg
import pytest

from gpux_billing.adapters.memory.best_asks import MemoryBestAsks
from gpux_billing.adapters.memory.holds import MemoryHolds
from gpux_billing.adapters.memory.interruptions import MemoryPendingInterruptions
from gpux_billing.adapters.memory.leases import MemoryLeases
from gpux_billing.adapters.memory.ledger import MemoryLedger
from gpux_billing.adapters.memory.rates import MemoryRates
from gpux_billing.adapters.memory.wallets import MemoryWallets
from gpux_billing.adapters.postgres.best_asks import PostgresBestAsks
from gpux_billing.adapters.postgres.holds import PostgresHolds
from gpux_billing.adapters.postgres.interruptions import PostgresPendingInterruptions
from gpux_billing.adapters.postgres.leases import PostgresLeases
from gpux_billing.adapters.postgres.ledger import PostgresLedger
from gpux_billing.adapters.postgres.rates import PostgresRates
from gpux_billing.adapters.postgres.wallets import PostgresWallets
from gpux_billing.domain import transfers
from gpux_billing.domain.fx import ToReference
from gpux_billing.domain.holds import Hold
from gpux_billing.domain.interruptions import Pending
from gpux_billing.domain.leases import Interruption, Lease, State, Terms
from gpux_billing.domain.ledger import InsufficientFunds
from gpux_billing.domain.topups import Topup
from gpux_billing.service.unit_of_work import (
    BestAsks,
    Holds,
    Leases,
    Ledger,
    PendingInterruptions,
    Rates,
    Wallets,
)
from gpux_contracts.capacity import InterruptionCause
from gpux_contracts.leases import LeaseEndReason
from gpux_contracts.money import Currency
from gpux_contracts.offers import BillingGranularity
from gpux_contracts.orders import OrderTier
from gpux_contracts.prices import BestAsk, BestAskChanged

from .contract_suite import NOW, Tagged

pytestmark = pytest.mark.integration  # the PostgreSQL side needs the database

USD, EUR, GBP = Currency.USD, Currency.EUR, Currency.GBP


@dataclass
class Repositories(Tagged):
    """One implementation of every repository, and a fresh prefix for this test's ids."""

    ledger: Ledger
    wallets: Wallets
    holds: Holds
    leases: Leases
    rates: Rates
    best_asks: BestAsks
    pending: PendingInterruptions


@pytest.fixture
def repos(contract_conn: asyncpg.Connection | None, contract_tag: str) -> Repositories:
    if (conn := contract_conn) is None:
        return Repositories(
            MemoryLedger(),
            MemoryWallets({}),
            MemoryHolds({}),
            MemoryLeases({}),
            MemoryRates({}),
            MemoryBestAsks({}),
            MemoryPendingInterruptions({}),
            tag=contract_tag,
        )
    return Repositories(
        PostgresLedger(conn),
        PostgresWallets(conn),
        PostgresHolds(conn),
        PostgresLeases(conn),
        PostgresRates(conn),
        PostgresBestAsks(conn),
        PostgresPendingInterruptions(conn),
        tag=contract_tag,
    )


def requested(topup_id: str, account: str, amount: int, provider: str = "manual") -> Topup:
    return Topup(topup_id, account, USD, amount, provider, "requested", confirmed=False)


async def test_a_topup_request_is_recorded_once(repos: Repositories) -> None:
    tid = repos.id("t")
    assert await repos.wallets.topup(tid) is None
    stored = await repos.wallets.record_request(requested(tid, "a1", 500), NOW)
    assert stored == requested(tid, "a1", 500)
    # The same top-up id again, with other fields: the first request stands.
    again = await repos.wallets.record_request(requested(tid, "a2", 900, "dev"), NOW)
    assert again == stored
    await repos.wallets.set_status(tid, "booked", None, NOW)
    assert await repos.wallets.topup(tid) == replace(stored, status="booked")


async def test_a_confirmation_before_its_request_is_kept(repos: Repositories) -> None:
    tid = repos.id("t")
    early = await repos.wallets.record_confirmation(tid, NOW)
    assert early == Topup(tid, None, None, None, None, "requested", confirmed=True)
    stored = await repos.wallets.record_request(requested(tid, "a1", 500), NOW)
    assert stored == replace(requested(tid, "a1", 500), confirmed=True)
    assert await repos.wallets.record_confirmation(tid, NOW) == stored


async def test_a_hold_is_kept_once_and_follows_its_fills_and_release(repos: Repositories) -> None:
    order = repos.id("o")
    assert await repos.holds.get(order) is None
    hold = Hold(order, "b1", "gpu", 4, EUR, 1_000_000)
    await repos.holds.add_many([(hold, NOW)])
    await repos.holds.add_many([(replace(hold, held_micros=5), NOW)])  # once: the first stands
    assert await repos.holds.get(order) == hold
    await repos.holds.set_leased_gpus({order: 3})
    await repos.holds.record_releases([(order, 100, NOW)])
    await repos.holds.record_releases([(order, 150, NOW)])
    assert await repos.holds.get(order) == replace(hold, leased_gpus=3, released_micros=250)


async def test_a_batch_of_holds_is_read_added_and_released_at_once(repos: Repositories) -> None:
    o1, o2, o3 = repos.id("o1"), repos.id("o2"), repos.id("o3")
    first, second = Hold(o1, "b1", "gpu", 2, USD, 2_000_000), Hold(o2, "b2", "gpu", 1, EUR, 900)
    await repos.holds.add_many([(second, NOW), (first, NOW), (replace(first, gpus=1), NOW)])
    assert await repos.holds.get_many([o3, o2, o1]) == {o1: first, o2: second}
    assert await repos.holds.get_many([]) == {}
    await repos.holds.record_releases([(o1, 100, NOW), (o3, 5, NOW), (o1, 50, NOW)])
    assert await repos.holds.get_many([o1]) == {o1: replace(first, released_micros=150)}
    assert await repos.holds.get(o2) == second
    await repos.holds.set_leased_gpus({o1: 1, o2: 1, o3: 1})
    await repos.holds.set_leased_gpus({})
    found = await repos.holds.get_many([o1, o2, o3])
    assert {o: h.leased_gpus for o, h in found.items()} == {o1: 1, o2: 1}


def lease(lease_id: str, started_at: datetime, billing: BillingGranularity) -> Lease:
    terms = Terms(lease_id, "b1", "s1", USD, EUR, 2_000_000, billing, started_at, None, 60)
    return Lease(lease_id, "o1", "offer", "gpu", "on_demand", 2, 1_000_000, None, terms, State())


async def _ours(repos: Repositories, now: datetime, limit: int = 100) -> list[str]:
    return [x.id for x in await repos.leases.due(now, limit) if x.id.startswith(repos.tag)]


async def test_a_batch_of_leases_is_stored_at_once_each_once(repos: Repositories) -> None:
    first = lease(repos.id("a"), NOW, BillingGranularity.HOUR)
    second = lease(repos.id("b"), NOW, BillingGranularity.SECOND)
    await repos.leases.add_many([first, second, replace(first, gpus=1)])
    await repos.leases.add_many([replace(second, gpus=1)])  # once: the first stands
    await repos.leases.add_many([])
    assert await repos.leases.get(first.id) == first
    assert await repos.leases.get(second.id) == second
    assert not await repos.leases.add(first)


async def test_leases_are_stored_once_and_come_due_oldest_first(repos: Repositories) -> None:
    hourly = lease(repos.id("h"), NOW, BillingGranularity.HOUR)  # due at its start
    later = lease(repos.id("s"), NOW, BillingGranularity.SECOND)  # due after 60 s
    assert await repos.leases.add(later)
    assert await repos.leases.add(hourly)
    assert not await repos.leases.add(hourly)
    none = repos.id("none")
    assert await repos.leases.existing([hourly.id, none, later.id]) == {hourly.id, later.id}
    assert await repos.leases.existing([none]) == set()
    assert await repos.leases.existing([]) == set()
    assert await repos.leases.get(hourly.id) == hourly
    assert await repos.leases.get(repos.id("none")) is None
    assert await _ours(repos, NOW) == [hourly.id]
    assert await _ours(repos, NOW + timedelta(seconds=60)) == [hourly.id, later.id]


async def test_saved_and_postponed_leases_come_due_when_their_state_says(
    repos: Repositories,
) -> None:
    running = lease(repos.id("a"), NOW, BillingGranularity.SECOND)
    ending = lease(repos.id("b"), NOW, BillingGranularity.SECOND)
    await repos.leases.add(running)
    await repos.leases.add(ending)
    paid = State(1, NOW + timedelta(seconds=60), 33_333, 30_666, 3_333, 30_000)
    over = replace(paid, ended_at=NOW + timedelta(seconds=60), end_reason=LeaseEndReason.STOPPED)
    await repos.leases.save([(running.terms, paid), (ending.terms, over)])
    assert await repos.leases.get(running.id) == replace(running, state=paid)
    assert await repos.leases.get(ending.id) == replace(ending, state=over)
    assert await _ours(repos, NOW + timedelta(seconds=119)) == []
    assert await _ours(repos, NOW + timedelta(seconds=120)) == [running.id]
    # Postponed: due no sooner than then, never earlier than it was; an ended lease stays so.
    await repos.leases.postpone([running.id, ending.id], NOW + timedelta(seconds=300))
    await repos.leases.postpone([running.id], NOW + timedelta(seconds=200))
    assert await _ours(repos, NOW + timedelta(seconds=299)) == []
    assert await _ours(repos, NOW + timedelta(seconds=300)) == [running.id]
    assert await _ours(repos, NOW + timedelta(days=1), limit=1) == [running.id]


async def test_an_interruption_is_kept_and_makes_its_lease_due_at_interrupt_at(
    repos: Repositories,
) -> None:
    running = lease(repos.id("i"), NOW, BillingGranularity.SECOND)
    await repos.leases.add(running)
    notice = Interruption(NOW + timedelta(seconds=30.5), InterruptionCause.RECLAIMED, NOW)
    interrupted = State(interruption=notice)
    await repos.leases.save([(running.terms, interrupted)])
    assert await repos.leases.get(running.id) == replace(running, state=interrupted)
    assert await _ours(repos, NOW + timedelta(seconds=30)) == []
    assert await _ours(repos, NOW + timedelta(seconds=30.5)) == [running.id]
    over = replace(interrupted, ended_at=notice.at, end_reason=LeaseEndReason.INTERRUPTED, period=1)
    await repos.leases.save([(running.terms, over)])
    assert await repos.leases.get(running.id) == replace(running, state=over)
    assert await _ours(repos, NOW + timedelta(days=1)) == []


async def test_a_lease_opened_interrupted_keeps_it_and_is_due_at_interrupt_at(
    repos: Repositories,
) -> None:
    notice = Interruption(NOW + timedelta(seconds=45.5), InterruptionCause.PREEMPTED, NOW)
    first = lease(repos.id("a"), NOW, BillingGranularity.SECOND)
    first = replace(first, state=State(interruption=notice))
    second = replace(lease(repos.id("b"), NOW, BillingGranularity.SECOND), state=first.state)
    assert await repos.leases.add(first)
    await repos.leases.add_many([second])
    assert await repos.leases.get(first.id) == first
    assert await repos.leases.get(second.id) == second
    assert await _ours(repos, NOW + timedelta(seconds=45)) == []
    assert await _ours(repos, NOW + timedelta(seconds=45.5)) == [first.id, second.id]


async def test_a_pending_interruption_is_kept_once_and_taken_once(repos: Repositories) -> None:
    a, b, none = repos.id("a"), repos.id("b"), repos.id("none")
    at = NOW + timedelta(seconds=120.25)
    first = Pending(a, "b1", "offer", "s1", Interruption(at, InterruptionCause.PREEMPTED, NOW))
    other = Pending(b, "b2", "offer2", "s2", Interruption(at, InterruptionCause.RECLAIMED, NOW))
    assert await repos.pending.keep(first)
    later = Interruption(at + timedelta(seconds=60), InterruptionCause.RECLAIMED, at)
    assert not await repos.pending.keep(replace(first, interruption=later))  # the first stands
    assert await repos.pending.keep(other)
    assert await repos.pending.take([]) == {}
    assert await repos.pending.take([none, a]) == {a: first}
    assert await repos.pending.take([a, b]) == {b: other}
    assert await repos.pending.take([a, b]) == {}


async def test_the_newest_rate_wins(repos: Repositories) -> None:
    first = ToReference(USD, Decimal("0.92"), NOW)
    await repos.rates.record(first)
    assert await repos.rates.all() == {USD: first}
    await repos.rates.record(ToReference(USD, Decimal("0.5"), NOW - timedelta(seconds=1)))
    assert (await repos.rates.all())[USD] == first
    same_time = ToReference(USD, Decimal("0.9213"), NOW)  # an equal time replaces it
    await repos.rates.record(same_time)
    await repos.rates.record(ToReference(GBP, Decimal("1.18"), NOW))
    assert await repos.rates.all() == {USD: same_time, GBP: ToReference(GBP, Decimal("1.18"), NOW)}


def ask(gpu: str, tier: str, prices: dict[Currency, str] | None, at: datetime) -> BestAskChanged:
    best = None
    if prices is not None:
        converted = {c: Decimal(p) for c, p in prices.items()}
        best = BestAsk(
            offer_id="offer", price=converted[USD], currency=USD, prices=converted, gpus=1
        )
    return BestAskChanged(gpu=gpu, tier=tier, region="*", best=best, depth=[], as_of=at)


async def best(
    repos: Repositories, gpu: str, tier: OrderTier, region: str | None, currency: Currency
) -> Decimal | None:
    ask = (gpu, tier, region, currency)
    return (await repos.best_asks.best_many([ask]))[ask]


async def test_the_best_ask_an_order_could_take(repos: Repositories) -> None:
    gpu = repos.id("gpu")
    await repos.best_asks.record(ask(gpu, "on_demand", {USD: "2.00", EUR: "1.84"}, NOW))
    await repos.best_asks.record(ask(gpu, "interruptible", {USD: "1.20"}, NOW))
    await repos.best_asks.record(ask(gpu, "on_demand", {USD: "0.10"}, NOW - timedelta(1)))
    assert await best(repos, gpu, OrderTier.ANY, None, USD) == Decimal("1.20")
    assert await best(repos, gpu, OrderTier.ON_DEMAND, None, USD) == Decimal("2.00")
    assert await best(repos, gpu, OrderTier.ANY, None, EUR) == Decimal("1.84")
    assert await best(repos, gpu, OrderTier.ANY, None, GBP) is None
    assert await best(repos, gpu, OrderTier.ANY, "eu-west", USD) is None
    await repos.best_asks.record(ask(gpu, "interruptible", None, NOW))  # the book emptied
    assert await best(repos, gpu, OrderTier.INTERRUPTIBLE, None, USD) is None
    assert await best(repos, gpu, OrderTier.ANY, None, USD) == Decimal("2.00")


async def test_the_best_asks_of_a_batch_are_read_at_once(repos: Repositories) -> None:
    gpu, other = repos.id("gpu"), repos.id("other")
    await repos.best_asks.record(ask(gpu, "on_demand", {USD: "2.00", EUR: "1.84"}, NOW))
    await repos.best_asks.record(ask(gpu, "interruptible", {USD: "1.20"}, NOW))
    await repos.best_asks.record(ask(other, "on_demand", None, NOW))
    asks = [
        (gpu, OrderTier.ANY, None, USD),
        (gpu, OrderTier.ON_DEMAND, None, USD),
        (gpu, OrderTier.ANY, None, EUR),
        (gpu, OrderTier.ANY, "eu-west", USD),
        (other, OrderTier.ANY, None, USD),
    ]
    assert await repos.best_asks.best_many(asks) == {
        asks[0]: Decimal("1.20"),
        asks[1]: Decimal("2.00"),
        asks[2]: Decimal("1.84"),
        asks[3]: None,
        asks[4]: None,
    }
    assert await repos.best_asks.best_many([]) == {}


async def test_wallet_balances_and_locks_read_the_ledger(repos: Repositories) -> None:
    buyer, idle = repos.id("b"), repos.id("idle")
    await repos.ledger.post(transfers.topup(repos.id("t"), buyer, USD, 1_000, NOW))
    await repos.ledger.post(transfers.hold(repos.id("h"), buyer, USD, 400, NOW))
    balances = await repos.ledger.wallet_balances([(buyer, USD), (buyer, EUR), (idle, USD)])
    assert balances == {(buyer, USD): (600, 400), (buyer, EUR): (0, 0), (idle, USD): (0, 0)}
    locked = await repos.ledger.lock_available([(idle, USD), (buyer, USD), (buyer, USD)])
    assert list(locked.items()) == [((buyer, USD), 600), ((idle, USD), 0)]  # key order
    assert {w for w in await repos.ledger.wallets() if w[0].startswith(repos.tag)} == {(buyer, USD)}


async def test_an_isolated_refusal_leaves_the_unit_usable(repos: Repositories) -> None:
    buyer = repos.id("b")
    await repos.ledger.post(transfers.topup(repos.id("t"), buyer, USD, 100, NOW))
    with pytest.raises(InsufficientFunds):
        await repos.ledger.post(transfers.hold(repos.id("h"), buyer, USD, 101, NOW), isolated=True)
    await repos.ledger.post(transfers.hold(repos.id("h2"), buyer, USD, 100, NOW))
    assert await repos.ledger.wallet_balances([(buyer, USD)]) == {(buyer, USD): (0, 100)}
    assert await repos.ledger.get(repos.id("h")) is None
