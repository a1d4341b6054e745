"""Capacity's invariants, checked after every step of random sessions (a stateful test).

A crowded market (one GPU, few sellers, mostly offers with an interruptible leg) where
pools run out, on-demand orders preempt, leases end and sellers reclaim. After every step:

(a) every pool the book keeps has leased + free == capacity and free >= 0, what its leases
    hold (not waiting for a preempted lease) plus its legacy GPUs is what it leases, and
    each book level shows exactly the free GPUs of the legs resting at its price;
(b) only interruptible leases are interrupted (never an on-demand one, never twice);
(c) every interruption ends at least the offer's notice (so at least 120 s) after it was
    decided;
(d) the engine answers exactly as the reference model, a replay of the session from the
    start gives the same results, and an engine restored from a snapshot taken at any step
    answers every later command as the original.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from gpux_matching.domain import (
    AddOffer,
    ChangeOffer,
    Command,
    Expire,
    MatchingEngine,
    PlaceOrder,
    Reason,
    ReclaimLease,
    ReleaseLease,
    Result,
    SetFx,
    WithdrawOffer,
    apply,
)

from .engine_calls import RATES, S
from .matching_model import INT, Model, engine_legs

pytestmark = pytest.mark.unit

SELLERS = ["s1", "s2", "s3"]
BUYERS = ["u1", "u2", "u3", "s1"]
GPU = "h100"
MIN_NOTICE_S = 120

prices = st.integers(1, 8).map(lambda n: n * 250_000)


class CapacitySession(RuleBasedStateMachine):
    """One market, driven by random commands; the checks are the invariants above."""

    def __init__(self) -> None:
        super().__init__()
        self.engine = MatchingEngine(RATES)
        self.model = Model(dict(RATES))
        self.restored: MatchingEngine | None = None
        self.log: list[Command] = []
        self.results: list[Result] = []
        self.notice_s: dict[str, int] = {}
        self.interrupted: set[str] = set()
        self.offers: list[str] = []
        self.prices: dict[str, tuple[int, bool] | None] = {}
        """Each on-demand offer's price and whether it has an interruptible leg."""
        self.now = 1_000 * S
        self.n = 0

    # Running a command ----------------------------------------------------------------------

    def tick(self) -> int:
        self.now += S
        self.n += 1
        return self.now

    def run(self, command: Command) -> Result:
        tiers = self.lease_tiers()
        result = apply(self.engine, command)
        out = self.model.run(command)
        assert (list(result.fills), list(result.orders), list(result.offers)) == (
            out.fills,
            out.orders,
            out.offers,
        )
        assert (list(result.interruptions), result.rejection) == (
            out.interruptions,
            out.rejection,
        )
        if self.restored is not None:
            assert apply(self.restored, command) == result
        for cut in result.interruptions:
            assert tiers[(cut.offer_id, cut.lease_id)] == INT  # (b)
            assert cut.lease_id not in self.interrupted
            self.interrupted.add(cut.lease_id)
            notice = cut.interrupt_at_micros - cut.at_micros
            assert notice >= self.notice_s[cut.offer_id] * S >= MIN_NOTICE_S * S  # (c)
        self.log.append(command)
        self.results.append(result)
        return result

    def lease_tiers(self) -> dict[tuple[str, str], str]:
        tiers: dict[tuple[str, str], str] = {}
        for offer_id in self.offers:
            pool = self.engine.pool(offer_id)
            if pool is not None:
                tiers.update(((offer_id, i), lease.tier) for i, lease in pool.leases.items())
        return tiers

    def leases(self) -> list[tuple[str, str, int]]:
        found = []
        for offer_id in self.offers:
            pool = self.engine.pool(offer_id)
            if pool is not None:
                found += [(offer_id, i, lease.gpus) for i, lease in pool.leases.items()]
        return found

    # Rules ----------------------------------------------------------------------------------

    @rule(
        seller=st.sampled_from(SELLERS),
        price=prices,
        gpus=st.integers(1, 4),
        below=st.sampled_from([1, 2, 0, None]),
        notice=st.sampled_from([120, 600, 86_400]),
        interruptible_only=st.sampled_from([False, False, True]),
    )
    def add_offer(
        self,
        *,
        seller: str,
        price: int,
        gpus: int,
        below: int | None,
        notice: int,
        interruptible_only: bool,
    ) -> None:
        offer_id = f"f{self.n}"
        tier = INT if interruptible_only else "on_demand"
        interruptible = None
        if below is not None and not interruptible_only:
            interruptible = max(price - below * 250_000, 250_000)
        now = self.tick()
        command = AddOffer(
            now, offer_id, seller, GPU, tier, price, "EUR", gpus, "hour", None, None, None
        )
        self.run(command._replace(interruptible_price_micros=interruptible, notice_s=notice))
        self.offers.append(offer_id)
        self.notice_s[offer_id] = notice
        self.prices[offer_id] = (price, interruptible is not None) if tier != INT else None

    @rule(
        buyer=st.sampled_from(BUYERS),
        tier=st.sampled_from(["on_demand", "interruptible", "any"]),
        price=st.one_of(st.none(), prices),
        gpus=st.integers(1, 5),
        tif=st.sampled_from(["gtc", "ioc", "fok"]),
        currency=st.sampled_from(["EUR", "EUR", "USD"]),
    )
    def place_order(
        self, *, buyer: str, tier: str, price: int | None, gpus: int, tif: str, currency: str
    ) -> None:
        kind = "market" if price is None else "limit"
        now = self.tick()
        order = PlaceOrder(now, f"b{self.n}", buyer, GPU, gpus, currency, kind, price, tier)
        self.run(order._replace(time_in_force=tif))

    # Two more ways in for orders, so that sessions fill pools and preempt.

    @rule(buyer=st.sampled_from(BUYERS), gpus=st.integers(1, 4), any_tier=st.booleans())
    def lease_interruptible(self, *, buyer: str, gpus: int, any_tier: bool) -> None:
        tier = "any" if any_tier else INT
        self.run(
            PlaceOrder(self.tick(), f"b{self.n}", buyer, GPU, gpus, "EUR", "market", None, tier)
        )

    @rule(
        buyer=st.sampled_from(BUYERS),
        gpus=st.integers(1, 4),
        price=st.one_of(st.none(), prices),
        tif=st.sampled_from(["gtc", "ioc", "fok"]),
    )
    def lease_on_demand(self, *, buyer: str, gpus: int, price: int | None, tif: str) -> None:
        kind = "market" if price is None else "limit"
        order = PlaceOrder(self.tick(), f"b{self.n}", buyer, GPU, gpus, "EUR", kind, price)
        self.run(order._replace(tier="on_demand", time_in_force=tif))

    @precondition(lambda self: bool(self.preemptable()))
    @rule(
        which=st.integers(0, 1_000),
        more=st.integers(1, 3),
        tif=st.sampled_from(["gtc", "ioc", "fok"]),
    )
    def preempt(self, which: int, more: int, tif: str) -> None:
        """An on-demand order at a pool's on-demand price for more than the free on-demand
        GPUs within it: it must preempt (unless a cheaper pool's leases cover it)."""
        candidates = self.preemptable()
        price = candidates[which % len(candidates)]
        free = sum(
            lv.gpus for lv in self.engine.levels(GPU, "on_demand").asks if lv.price_micros <= price
        )
        order = PlaceOrder(self.tick(), f"b{self.n}", "u9", GPU, free + more, "EUR", "limit", price)
        result = self.run(order._replace(tier="on_demand", time_in_force=tif))
        assert result.interruptions or tif == "fok"

    def preemptable(self) -> list[int]:
        """On-demand prices of pools with interruptible leases not being interrupted."""
        found = []
        for offer_id, known in self.prices.items():
            pool = self.engine.pool(offer_id)
            if known is None or not known[1] or pool is None:
                continue
            leases = pool.leases.values()
            if any(lease.tier == INT and lease.interrupt_at_micros is None for lease in leases):
                found.append(known[0])
        return found

    @precondition(lambda self: bool(self.leases()))
    @rule(which=st.integers(0, 1_000))
    def release(self, which: int) -> None:
        leases = self.leases()
        offer_id, lease_id, gpus = leases[which % len(leases)]
        self.run(ReleaseLease(self.tick(), lease_id, offer_id, gpus))

    @precondition(lambda self: bool(self.leases()))
    @rule(which=st.integers(0, 1_000))
    def reclaim(self, which: int) -> None:
        leases = self.leases()
        offer_id, lease_id, _ = leases[which % len(leases)]
        self.run(ReclaimLease(self.tick(), offer_id, lease_id))

    @rule(which=st.integers(0, 1_000))
    def release_unknown(self, which: int) -> None:
        offer_id = self.offers[which % len(self.offers)] if self.offers else "none"
        result = self.run(ReleaseLease(self.tick(), f"never-{which}", offer_id, 1))
        assert (result.fills, result.offers, result.levels) == ((), (), ())
        assert result.rejection == Reason.UNKNOWN_LEASE

    @precondition(lambda self: bool(self.offers))
    @rule(
        which=st.integers(0, 1_000),
        gpus=st.one_of(st.none(), st.integers(1, 6)),
        price=st.one_of(st.none(), prices),
        interruptible=st.one_of(st.none(), prices),
    )
    def change(
        self, which: int, gpus: int | None, price: int | None, interruptible: int | None
    ) -> None:
        offer_id = self.offers[which % len(self.offers)]
        result = self.run(ChangeOffer(self.tick(), offer_id, price, gpus, interruptible))
        known = self.prices.get(offer_id)
        if result.rejection is None and known is not None:
            self.prices[offer_id] = (
                known[0] if price is None else price,
                known[1] or interruptible is not None,
            )

    @precondition(lambda self: bool(self.offers))
    @rule(which=st.integers(0, 1_000))
    def withdraw(self, which: int) -> None:
        self.run(WithdrawOffer(self.tick(), self.offers[which % len(self.offers)]))

    @rule(rate=st.sampled_from([None, 900_000, 1_100_000, 500_000]))
    def time_passes(self, rate: int | None) -> None:
        now = self.tick()
        self.run(Expire(now) if rate is None else SetFx(now, {"USD": rate}))

    @rule()
    def snapshot_and_restore(self) -> None:
        snapshot = self.engine.snapshot()
        restored = MatchingEngine.restore(json.loads(json.dumps(snapshot)))
        assert restored.snapshot() == snapshot
        self.restored = restored  # from now on it must answer every command as the original

    # Invariants -----------------------------------------------------------------------------

    @invariant()
    def pools_add_up(self) -> None:  # (a)
        for offer_id in self.offers:
            pool = self.engine.pool(offer_id)
            if pool is None:
                continue
            assert pool.leased + pool.free == pool.capacity
            assert pool.free >= 0
            held = sum(lease.gpus for lease in pool.leases.values() if lease.starts_after is None)
            assert held + pool.legacy == pool.leased

    @invariant()
    def levels_show_the_free_gpus_of_their_legs(self) -> None:  # (a)
        expected: Counter[tuple[str, int]] = Counter()
        for leg in engine_legs(self.engine):
            expected[(leg.tier, leg.price)] += leg.free  # one currency at rate 1: same micros
        for tier in ("on_demand", "interruptible"):
            shown = {lv.price_micros: lv.gpus for lv in self.engine.levels(GPU, tier, 1_000).asks}
            assert shown == {p: g for (t, p), g in expected.items() if t == tier}

    def teardown(self) -> None:  # (d)
        replay = MatchingEngine(RATES)
        assert [apply(replay, command) for command in self.log] == self.results
        assert replay.snapshot() == self.engine.snapshot()


CapacitySession.TestCase.settings = settings(
    max_examples=150,
    stateful_step_count=50,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
test_capacity_invariants_hold_at_every_step = CapacitySession.TestCase
