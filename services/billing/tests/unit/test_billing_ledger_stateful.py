"""Stateful test of the ledger: random sequences of top-ups, holds, partial charges, releases,
charges with a fee, FX, corrections and replays, checked after every step.

The machine keeps its own model of every balance (an auditor independent of the store) and
after each step asserts: entries sum to zero per currency, cached balances equal the sum of
entries, no available/held/payable balance is below zero, and every balance equals the model.
It runs here against the in-memory reference ledger with many examples, and against the
PostgreSQL adapter in ``tests/integration/test_billing_ledger_stateful.py`` (which loads
this module) with fewer.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any, ClassVar, TypeVar

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    consumes,
    invariant,
    rule,
    run_state_machine_as_test,
)

from gpux_billing.adapters.memory.ledger import MemoryLedger
from gpux_billing.domain import transfers
from gpux_billing.domain.amounts import convert
from gpux_billing.domain.ledger import (
    AccountKey,
    AccountKind,
    FxQuote,
    InsufficientFunds,
    Transfer,
    TransferMismatch,
)
from gpux_billing.domain.posting import Posted
from gpux_billing.domain.transfers import Sale
from gpux_billing.service.unit_of_work import Ledger
from gpux_contracts.ids import new_id
from gpux_contracts.money import Currency

T = TypeVar("T")
BASE_TIME = datetime(2026, 11, 29, 12, tzinfo=UTC)
CURRENCIES = list(Currency)
FLOORED = {AccountKind.AVAILABLE, AccountKind.HELD, AccountKind.SELLER_PAYABLE}
PLATFORM_KINDS = [AccountKind.PLATFORM_REVENUE, AccountKind.FX_HOUSE, AccountKind.TOPUP_CLEARING]
_RUN = new_id()[-8:]
Build = Callable[[str, str, Currency, int, datetime], Transfer]
"""A builder of a transfer within one owner's wallet (``transfers.hold``, ``release``)."""
_EXAMPLES = itertools.count()

amounts = st.one_of(st.integers(1, 1_000), st.integers(1, 10_000_000_000))
# Moves take a share of what the source holds; above 100 % the ledger must refuse them.
shares = st.integers(1, 120)
buyers = st.integers(0, 1)
sellers = st.integers(0, 1)
currencies = st.sampled_from(CURRENCIES)
picks = st.integers(0, 1_000)
fees = st.one_of(st.just(1000), st.integers(0, 10_000))
rates = st.decimals(Decimal("0.01"), Decimal("50"), places=6)


@dataclass
class Backend:
    """How the machine reaches one store: its ledger, connection and coroutine runner."""

    ledger: Ledger
    run: Callable[[Awaitable[Any]], Any]
    atomic: Callable[[], contextlib.AbstractAsyncContextManager[Any]]
    close: Callable[[], None]


def run_now(awaitable: Awaitable[T]) -> T:
    """Drive a coroutine that never suspends (the memory ledger's) to its result."""
    coroutine: Coroutine[Any, Any, T] = awaitable  # type: ignore[assignment]
    try:
        coroutine.send(None)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]
    coroutine.close()
    raise RuntimeError("the coroutine suspended; use an event loop")


def memory_backend() -> Backend:
    """A fresh in-memory ledger for one example."""
    return Backend(MemoryLedger(), run_now, contextlib.nullcontext, lambda: None)


class LedgerMachine(RuleBasedStateMachine):
    """Rules over one store; ``make_machine`` names the stores (``open_backend``)."""

    posted = Bundle("posted")
    open_backend: ClassVar[Callable[[], Backend]]

    def __init__(self) -> None:
        super().__init__()
        self.backend = type(self).open_backend()
        prefix = f"{_RUN}x{next(_EXAMPLES)}"
        self.buyers = [f"{prefix}b{i}" for i in range(2)]
        self.sellers = [f"{prefix}s{i}" for i in range(2)]
        self.prefix = prefix
        self.steps = itertools.count()
        self.model: dict[AccountKey, int] = {}
        for currency in CURRENCIES:
            for kind in PLATFORM_KINDS:
                key = transfers.platform_account(currency, kind)
                self.model[key] = self._ledger_call("balance", key)

    def teardown(self) -> None:
        self.backend.close()

    # -- plumbing -------------------------------------------------------------------

    def _call(self, coroutine_fn: Awaitable[T]) -> T:
        return self.backend.run(coroutine_fn)  # type: ignore[no-any-return]

    def _ledger_call(self, method: str, *args: Any) -> Any:
        return self._call(getattr(self.backend.ledger, method)(*args))

    def _next(self) -> tuple[str, datetime]:
        step = next(self.steps)
        return f"{self.prefix}t{step}", BASE_TIME + timedelta(seconds=step)

    def _post(self, transfer: Transfer) -> Posted:
        async def attempt() -> Posted:
            async with self.backend.atomic():
                return await self.backend.ledger.post(transfer)

        return self._call(attempt())

    def _source(self, kind: AccountKind, pick: int) -> tuple[str, Currency]:
        """A buyer's account of ``kind``: mostly one that holds money, else any."""
        funded = sorted(
            a for a, b in self.model.items() if a.kind is kind and b > 0 and a.owner in self.buyers
        )
        if funded and pick % 7 != 3:  # hypothesis favours 0 and boundaries: not those
            chosen = funded[pick % len(funded)]
            return chosen.owner, chosen.currency
        return self.buyers[pick % 2], CURRENCIES[pick % 3]

    def _share(self, owner: str, currency: Currency, kind: AccountKind, pct: int) -> int:
        """``pct`` % of what the account holds (at least one micro-unit)."""
        return max(1, self.model.get(AccountKey(owner, currency, kind), 0) * pct // 100)

    def _taken(self, kind: AccountKind, pick: int, share: int) -> tuple[str, Currency, int]:
        """An account of ``kind`` (``_source``): its owner, its currency and ``share`` % of
        what it holds."""
        owner, currency = self._source(kind, pick)
        return owner, currency, self._share(owner, currency, kind, share)

    def _move(self, build: Build, kind: AccountKind, pick: int, share: int) -> Transfer | None:
        """Apply ``build`` (a hold or a release) to ``share`` % of an account of ``kind``."""
        owner, currency, amount = self._taken(kind, pick, share)
        tid, at = self._next()
        return self._apply(build(tid, owner, currency, amount, at))

    def _short(self, transfer: Transfer) -> bool:
        return any(
            e.account.kind in FLOORED and self.model.get(e.account, 0) + e.amount_micros < 0
            for e in transfer.entries
        )

    def _apply(self, transfer: Transfer) -> Transfer | None:
        """Post a new transfer; the model decides whether it must be refused."""
        if self._short(transfer):
            with pytest.raises(InsufficientFunds):
                self._post(transfer)
            return None
        outcome = self._post(transfer)
        assert not outcome.replayed
        assert outcome.transfer.same_as(transfer)
        for entry in transfer.entries:
            self.model[entry.account] = self.model.get(entry.account, 0) + entry.amount_micros
        return transfer

    # -- rules ----------------------------------------------------------------------

    @rule(target=posted, buyer=buyers, currency=currencies, amount=amounts)
    def topup(self, buyer: int, currency: Currency, amount: int) -> Transfer | None:
        tid, at = self._next()
        return self._apply(transfers.topup(tid, self.buyers[buyer], currency, amount, at))

    @rule(target=posted, pick=picks, share=shares)
    def hold(self, pick: int, share: int) -> Transfer | None:
        return self._move(transfers.hold, AccountKind.AVAILABLE, pick, share)

    @rule(target=posted, pick=picks, share=shares)
    def release(self, pick: int, share: int) -> Transfer | None:
        """Release part (or all) of what is held."""
        return self._move(transfers.release, AccountKind.HELD, pick, share)

    @rule(target=posted, pick=picks, seller=sellers, share=shares, fee_bps=fees,
          from_held=st.booleans())  # fmt: skip
    def charge(
        self, *, pick: int, seller: int, share: int, fee_bps: int, from_held: bool
    ) -> Transfer | None:
        """Charge part of a hold (a partial post), or straight from available."""
        source = AccountKind.HELD if from_held else AccountKind.AVAILABLE
        owner, currency, amount = self._taken(source, pick, share)
        tid, at = self._next()
        sale = Sale(owner, self.sellers[seller], currency, amount)
        built = transfers.charge(tid, sale, fee_bps, at, source=source)
        return self._apply(built)

    @rule(target=posted, pick=picks, seller=sellers, offset=st.integers(1, 2), share=shares,
          fee_bps=fees, rate=rates)  # fmt: skip
    def charge_across_currencies(
        self, *, pick: int, seller: int, offset: int, share: int, fee_bps: int, rate: Decimal
    ) -> Transfer | None:
        """The offer is in one currency, the buyer's hold in another: through the FX house."""
        owner, wallet = self._source(AccountKind.HELD, pick)
        offer = CURRENCIES[(CURRENCIES.index(wallet) + offset) % 3]
        # The offer-currency amount that costs about ``share`` % of the hold.
        held = self._share(owner, wallet, AccountKind.HELD, share)
        amount = max(1, int(Decimal(held) / rate))
        if convert(amount, rate) == 0:
            return None  # the buyer's side would round to nothing: the builder refuses it
        tid, at = self._next()
        fx = FxQuote(offer, wallet, rate, at - timedelta(seconds=5))
        built = transfers.charge(
            tid, Sale(owner, self.sellers[seller], offer, amount), fee_bps, at, fx=fx
        )
        return self._apply(built)

    @rule(target=posted, pick=picks, offset=st.integers(1, 2), share=shares, rate=rates)
    def exchange(self, pick: int, offset: int, share: int, rate: Decimal) -> Transfer | None:
        """Convert part of one wallet currency into another."""
        owner, source, amount = self._taken(AccountKind.AVAILABLE, pick, share)
        target = CURRENCIES[(CURRENCIES.index(source) + offset) % 3]
        if convert(amount, rate) == 0:
            return None  # too small to convert into one micro-unit: nothing to post
        tid, at = self._next()
        built = transfers.exchange(
            tid,
            AccountKey(owner, source, AccountKind.AVAILABLE),
            AccountKey(owner, target, AccountKind.AVAILABLE),
            amount,
            FxQuote(source, target, rate, at),
            created_at=at,
        )
        return self._apply(built)

    @rule(original=consumes(posted))
    def correct(self, original: Transfer | None) -> None:
        """Reverse an earlier transfer (refused if its money has moved on)."""
        if original is None:
            return
        tid, at = self._next()
        self._apply(transfers.reversal(original, tid, at))

    @rule(original=posted)
    def replay(self, original: Transfer | None) -> None:
        """Posting the same transfer again is a no-op returning the original."""
        if original is None:
            return
        outcome = self._post(original)
        assert outcome.replayed
        assert outcome.transfer.same_as(original)

    @rule(original=posted, shift_s=st.integers(1, 3600))
    def replay_changed(self, original: Transfer | None, shift_s: int) -> None:
        """The same id with another field is refused, and changes nothing."""
        if original is None:
            return
        changed = Transfer(
            original.id,
            original.kind,
            original.entries,
            original.created_at + timedelta(seconds=shift_s),
            original.fx,
            original.reference,
        )
        with pytest.raises(TransferMismatch):
            self._post(changed)

    # -- invariants -----------------------------------------------------------------

    @invariant()
    def ledger_is_sound(self) -> None:
        audit = self._ledger_call("verify")
        assert audit.discrepancies == ()  # cached balances equal the sum of entries
        assert all(total == 0 for _, total in audit.totals)  # zero per currency
        assert audit.unbalanced == ()
        assert audit.malformed == ()
        assert audit.below_floor == ()

    @invariant()
    def balances_match_the_model(self) -> None:
        for owner in [*self.buyers, *self.sellers, "platform"]:
            stored = {b.account: b.balance_micros for b in self._ledger_call("balances", owner)}
            for account, expected in self.model.items():
                if account.owner == owner:
                    assert stored.get(account, 0) == expected, account
                    if account.kind in FLOORED:
                        assert expected >= 0


def make_machine(open_backend: Callable[[], Backend]) -> type[RuleBasedStateMachine]:
    """A ledger state machine over the stores ``open_backend`` gives, one per example."""
    return type("LedgerMachine", (LedgerMachine,), {"open_backend": staticmethod(open_backend)})


def run_machine(open_backend: Callable[[], Backend], **options: Any) -> None:
    """Run the ledger state machine against the stores ``open_backend`` gives."""
    config = settings(
        deadline=None,
        database=None,  # a shared checkout: keep hypothesis's example database out of it
        suppress_health_check=[HealthCheck.too_slow],
        **options,
    )
    run_state_machine_as_test(make_machine(open_backend), settings=config)


def test_the_memory_ledger_keeps_every_invariant() -> None:
    run_machine(memory_backend, max_examples=200, stateful_step_count=40)
