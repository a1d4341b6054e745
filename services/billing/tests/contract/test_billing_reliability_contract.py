"""One contract for the reliability counts, on the memory fake and on PostgreSQL (in a
transaction that is rolled back): each lease counts at most once per kind, however often it
is given; an offer's counts grow by what was new; a seller's are summed over all its offers,
those counted before included; what was counted comes back in the order given."""

from __future__ import annotations

from dataclasses import dataclass

import asyncpg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpux_billing.adapters.memory.reliability import Counts, MemoryReliability
from gpux_billing.adapters.postgres.reliability import PostgresReliability
from gpux_billing.domain.reliability import Counted, Kind, Outcome
from gpux_billing.service.unit_of_work import Reliability
from gpux_contracts.ids import new_id
from gpux_contracts.reliability import ReliabilityCounts

from .contract_suite import NOW, Tagged

pytestmark = pytest.mark.integration  # the PostgreSQL side needs the database

READY, FAILED, RECLAIMED = Kind.READY_IN_TIME, Kind.FAILED, Kind.RECLAIMED


@dataclass
class Repository(Tagged):
    reliability: Reliability

    def outcome(self, lease: str, offer: str, seller: str, kind: Kind) -> Outcome:
        """An outcome whose ids are this test's own."""
        return Outcome(self.id(lease), self.id(offer), self.id(seller), kind)


@pytest.fixture
def repo(contract_conn: asyncpg.Connection | None, contract_tag: str) -> Repository:
    if (conn := contract_conn) is None:
        return Repository(MemoryReliability(Counts()), tag=contract_tag)
    return Repository(PostgresReliability(conn), tag=contract_tag)


def counts(ready: int = 0, failed: int = 0, reclaimed: int = 0) -> ReliabilityCounts:
    return ReliabilityCounts(ready_in_time=ready, failed=failed, reclaimed=reclaimed)


async def test_each_outcome_counts_for_its_offer_and_its_seller(repo: Repository) -> None:
    first = repo.outcome("l1", "a", "s1", READY)
    second = repo.outcome("l2", "a", "s1", READY)
    failed = repo.outcome("l3", "b", "s1", FAILED)
    elsewhere = repo.outcome("l4", "c", "s2", RECLAIMED)
    counted = await repo.reliability.count([first, second, failed, elsewhere], NOW)
    assert counted == Counted(
        (first, second, failed, elsewhere),
        {
            repo.id("a"): counts(ready=2),
            repo.id("b"): counts(failed=1),
            repo.id("c"): counts(0, 0, 1),
        },
        {repo.id("s1"): counts(ready=2, failed=1), repo.id("s2"): counts(reclaimed=1)},
    )


async def test_a_lease_counts_once_per_kind_however_often_it_is_given(repo: Repository) -> None:
    ready, reclaimed = (
        repo.outcome("l1", "a", "s1", READY),
        repo.outcome("l1", "a", "s1", RECLAIMED),
    )
    once = await repo.reliability.count([ready, ready, reclaimed, ready], NOW)
    assert (once.new, once.offers) == ((ready, reclaimed), {repo.id("a"): counts(1, 0, 1)})
    assert await repo.reliability.count([reclaimed, ready], NOW) == Counted()
    assert await repo.reliability.count([], NOW) == Counted()
    failed = repo.outcome("l1", "a", "s1", FAILED)  # another kind of the same lease counts
    again = await repo.reliability.count([ready, failed], NOW)
    assert (again.new, again.offers) == ((failed,), {repo.id("a"): counts(1, 1, 1)})


async def test_a_sellers_counts_include_its_offers_counted_before(repo: Repository) -> None:
    await repo.reliability.count([repo.outcome("l1", "a", "s1", READY)], NOW)
    await repo.reliability.count([repo.outcome("l2", "c", "s2", FAILED)], NOW)
    later = repo.outcome("l3", "b", "s1", FAILED)
    counted = await repo.reliability.count([later], NOW)
    assert counted == Counted(
        (later,), {repo.id("b"): counts(failed=1)}, {repo.id("s1"): counts(ready=1, failed=1)}
    )


async def test_what_was_counted_comes_back_in_the_order_given(repo: Repository) -> None:
    given_order = [
        repo.outcome("l9", "b", "s1", READY),
        repo.outcome("l1", "a", "s1", READY),
        repo.outcome("l5", "b", "s1", RECLAIMED),
    ]
    counted = await repo.reliability.count(given_order, NOW)
    assert list(counted.new) == given_order
    assert counted.last() == {repo.id("a"): given_order[1], repo.id("b"): given_order[2]}


# Against a reference model ----------------------------------------------------------------

OUTCOMES = st.tuples(
    st.integers(0, 5),  # the lease; its offer and seller follow from it
    st.sampled_from(list(Kind)),
)


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(batches=st.lists(st.lists(OUTCOMES, max_size=6), max_size=5))
async def test_counts_are_the_distinct_outcomes_whatever_the_batches(
    repo: Repository, batches: list[list[tuple[int, Kind]]]
) -> None:
    """Each example counts under ids of its own (the fixture's transaction spans them)."""
    tag = new_id()[-6:]

    def outcome(lease: int, kind: Kind) -> Outcome:
        offer = lease % 3  # offers 0 and 2 are seller 0's, offer 1 seller 1's
        return repo.outcome(f"{tag}l{lease}", f"{tag}o{offer}", f"{tag}s{offer % 2}", kind)

    seen: set[tuple[int, Kind]] = set()
    for batch in batches:
        counted = await repo.reliability.count([outcome(*o) for o in batch], NOW)
        new = list(dict.fromkeys(o for o in batch if o not in seen))
        seen.update(new)
        assert list(counted.new) == [outcome(*o) for o in new]
        for offer_id, found in counted.offers.items():
            mine = [k for lease, k in seen if outcome(lease, k).offer_id == offer_id]
            assert found == counts(mine.count(READY), mine.count(FAILED), mine.count(RECLAIMED))
        for seller_id, found in counted.sellers.items():
            mine = [k for lease, k in seen if outcome(lease, k).seller_id == seller_id]
            assert found == counts(mine.count(READY), mine.count(FAILED), mine.count(RECLAIMED))
