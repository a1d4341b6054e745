"""One contract for the provisioning side of billing's repositories, on the memory fakes and
on PostgreSQL (in a transaction that is rolled back): a provisioning lease is stored with its
deadline and due then, a lease made ready comes back with its new start and end, a failed one
with its failure, and sellers' reports before their trade are kept once and taken once."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta

import asyncpg
import pytest

from gpux_billing.adapters.memory.leases import MemoryLeases
from gpux_billing.adapters.memory.reports import MemoryPendingReports
from gpux_billing.adapters.postgres.leases import PostgresLeases
from gpux_billing.adapters.postgres.reports import PostgresPendingReports
from gpux_billing.domain.leases import Lease, State, Terms, ends_at
from gpux_billing.domain.provisioning import PendingReport, ReportKind, ready
from gpux_billing.service.unit_of_work import Leases, PendingReports
from gpux_contracts.leases import LeaseEndReason, LeaseFailure
from gpux_contracts.money import Currency
from gpux_contracts.offers import BillingGranularity

from .contract_suite import NOW, Tagged

pytestmark = pytest.mark.integration  # the PostgreSQL side needs the database

DEADLINE = NOW + timedelta(seconds=600)


@dataclass
class Repositories(Tagged):
    leases: Leases
    reports: PendingReports


@pytest.fixture
def repos(contract_conn: asyncpg.Connection | None, contract_tag: str) -> Repositories:
    if (conn := contract_conn) is None:
        return Repositories(MemoryLeases({}), MemoryPendingReports({}), tag=contract_tag)
    return Repositories(PostgresLeases(conn), PostgresPendingReports(conn), tag=contract_tag)


def provisioning(lease_id: str, hours: int | None = 2) -> Lease:
    end = ends_at(NOW, hours)
    terms = Terms(
        lease_id, "b1", "s1", Currency.USD, Currency.USD, 2_000_000,
        BillingGranularity.HOUR, NOW, end, 60,
    )  # fmt: skip
    state = State(held_micros=4_000_000, provisioning_deadline=DEADLINE)
    return Lease(lease_id, "o1", "offer", "gpu", "on_demand", 2, 1_000_000, hours, terms, state)


async def _due(repos: Repositories, now: datetime) -> list[str]:
    return [x.id for x in await repos.leases.due(now, 100) if x.id.startswith(repos.tag)]


async def test_a_provisioning_lease_is_stored_with_its_deadline_and_due_then(
    repos: Repositories,
) -> None:
    first, second = provisioning(repos.id("a")), provisioning(repos.id("b"), None)
    assert await repos.leases.add(first)
    await repos.leases.add_many([second])
    assert await repos.leases.get(first.id) == first
    assert await repos.leases.get(second.id) == second
    assert await _due(repos, DEADLINE - timedelta(microseconds=1)) == []
    assert await _due(repos, DEADLINE) == [first.id, second.id]


async def test_a_lease_made_ready_comes_back_ready_from_its_new_start(
    repos: Repositories,
) -> None:
    stored = provisioning(repos.id("r"))
    await repos.leases.add(stored)
    made = ready(stored, NOW + timedelta(seconds=90.5))
    await repos.leases.save([(made.terms, made.state)])
    found = await repos.leases.get(stored.id)
    assert found == made
    assert found is not None
    assert found.terms.ends_at == NOW + timedelta(seconds=90.5, hours=2)
    assert not found.state.provisioning
    assert await _due(repos, NOW + timedelta(seconds=90)) == []  # its first hour: at ready_at
    assert await _due(repos, NOW + timedelta(seconds=90.5)) == [stored.id]


async def test_a_failed_lease_keeps_its_failure_and_is_never_due(repos: Repositories) -> None:
    stored = provisioning(repos.id("f"))
    await repos.leases.add(stored)
    failed = replace(
        stored.state,
        held_micros=0,
        ended_at=NOW + timedelta(seconds=5),
        end_reason=LeaseEndReason.FAILED,
        failure=LeaseFailure.SELLER_REPORTED,
        failure_detail="no power",
    )
    await repos.leases.save([(stored.terms, failed)])
    assert await repos.leases.get(stored.id) == replace(stored, state=failed)
    assert await _due(repos, NOW + timedelta(days=1)) == []


async def test_a_pending_report_is_kept_once_and_taken_once(repos: Repositories) -> None:
    a, b, none = repos.id("a"), repos.id("b"), repos.id("none")
    first = PendingReport(a, "b1", "s1", ReportKind.FAILED, NOW + timedelta(seconds=1.5), "oops")
    other = PendingReport(b, "b2", "s2", ReportKind.READY, NOW)
    assert await repos.reports.keep(first)
    assert not await repos.reports.keep(replace(first, kind=ReportKind.READY))  # first stands
    assert await repos.reports.keep(other)
    assert await repos.reports.take([]) == {}
    assert await repos.reports.take([none, a]) == {a: first}
    assert await repos.reports.take([a, b]) == {b: other}
    assert await repos.reports.take([a, b]) == {}
