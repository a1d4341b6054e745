"""What a ledger store answers, the interface both stores implement, and their shared rules.

Two stores implement ``Ledger``: ``gpux_billing.adapters.ledger_repository`` (PostgreSQL)
and ``gpux_billing.domain.memory.MemoryLedger`` (the reference, in memory). One contract
test suite runs against both. ``conn`` is the caller's connection (inside the caller's
transaction; a store never commits); the memory store ignores it.

A batch (``post_many``) is all or nothing, and balance floors apply to each account's
balance after the whole batch (its net change), exactly as for a single transfer. A batch's
new transfers are checked against the floors before its replays are compared (the SQL
adapter can only compare replays after its one statement); for a single transfer the order
cannot matter, since a replayed id posts nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from gpux_billing.domain.ledger import (
    AccountKey,
    AccountKind,
    InsufficientFunds,
    Transfer,
    TransferKind,
    TransferMismatch,
)
from gpux_contracts.money import Currency

MAX_STATEMENT_LIMIT = 1000


@dataclass(frozen=True, slots=True)
class Posted:
    """The outcome of posting: the transfer as stored, and whether it was already there."""

    transfer: Transfer
    replayed: bool


@dataclass(frozen=True, slots=True)
class Balance:
    """An account's balance in micro-units."""

    account: AccountKey
    balance_micros: int


@dataclass(frozen=True, slots=True)
class StatementLine:
    """One entry on an owner's statement, with its transfer's facts."""

    seq: int
    transfer_id: str
    transfer_kind: TransferKind
    created_at: datetime
    account_kind: AccountKind
    amount_micros: int
    reference: str


@dataclass(frozen=True, slots=True)
class StatementPage:
    """Statement lines, newest first; ``next_cursor`` fetches the older ones (None at the end)."""

    lines: tuple[StatementLine, ...]
    next_cursor: int | None


@dataclass(frozen=True, slots=True)
class Discrepancy:
    """An account whose cached balance differs from the sum of its entries."""

    account: AccountKey
    cached_micros: int
    entries_micros: int


@dataclass(frozen=True, slots=True)
class Audit:
    """A full recomputation of the ledger from its entries; ``ok`` when every invariant holds.

    ``malformed``: transfers without legs 1..n, or whose currencies do not match their FX quote.
    """

    discrepancies: tuple[Discrepancy, ...]
    unbalanced: tuple[str, ...]
    malformed: tuple[str, ...]
    below_floor: tuple[AccountKey, ...]
    totals: tuple[tuple[Currency, int], ...]

    @property
    def ok(self) -> bool:
        """Cached balances equal entries, transfers balance and are well formed, floors hold."""
        return not (
            self.discrepancies
            or self.unbalanced
            or self.malformed
            or self.below_floor
            or any(total != 0 for _, total in self.totals)
        )


class Ledger(Protocol):
    """The ledger's interface, implemented by the PostgreSQL adapter and the memory reference."""

    async def post(self, conn: Any, transfer: Transfer) -> Posted:
        """Post one transfer; an identical replay returns the original (``replayed``)."""
        ...

    async def post_many(self, conn: Any, transfers: Sequence[Transfer]) -> list[Posted]:
        """Post a batch, all or nothing; results in the order given."""
        ...

    async def get(self, conn: Any, transfer_id: str) -> Transfer | None:
        """A posted transfer, or None."""
        ...

    async def balance(self, conn: Any, account: AccountKey) -> int:
        """An account's balance in micro-units (0 for an account never used)."""
        ...

    async def balances(self, conn: Any, owner: str) -> list[Balance]:
        """Every account of an owner, ordered by currency and kind."""
        ...

    async def statement(
        self,
        conn: Any,
        owner: str,
        currency: Currency,
        cursor: int | None = None,
        limit: int = 50,
    ) -> StatementPage:
        """An owner's entries in one currency (all its kinds), newest first, paginated."""
        ...

    async def verify(self, conn: Any) -> Audit:
        """Recompute every balance from the entries and check every invariant."""
        ...


def plan_batch(transfers: Sequence[Transfer]) -> tuple[list[Transfer], list[int]]:
    """The distinct transfers of a batch, and for each given one the index of its distinct one.

    The same id twice in one batch is a replay of the first (or ``TransferMismatch``).
    """
    unique: list[Transfer] = []
    index_of: dict[str, int] = {}
    positions: list[int] = []
    for transfer in transfers:
        seen = index_of.get(transfer.id)
        if seen is None:
            seen = index_of[transfer.id] = len(unique)
            unique.append(transfer)
        elif not unique[seen].same_as(transfer):
            raise TransferMismatch(transfer.id, unique[seen])
        positions.append(seen)
    return unique, positions


def batch_results(
    unique: Sequence[Transfer], positions: Sequence[int], outcomes: Mapping[str, Posted]
) -> list[Posted]:
    """Outcomes in the order given; a later copy of an id in the batch is a replay of the first."""
    results: list[Posted] = []
    seen: set[int] = set()
    for i in positions:
        outcome = outcomes[unique[i].id]
        results.append(Posted(outcome.transfer, replayed=True) if i in seen else outcome)
        seen.add(i)
    return results


def check_replay(stored: Transfer, given: Transfer) -> Posted:
    """The result of posting ``given`` again: the stored original, or ``TransferMismatch``."""
    if not stored.same_as(given):
        raise TransferMismatch(given.id, stored)
    return Posted(stored, replayed=True)


def net_changes(transfers: Iterable[Transfer]) -> dict[AccountKey, int]:
    """The net change of every account the transfers touch."""
    changes: dict[AccountKey, int] = {}
    for transfer in transfers:
        for entry in transfer.entries:
            changes[entry.account] = changes.get(entry.account, 0) + entry.amount_micros
    return changes


def first_shortfall(
    balances: Mapping[AccountKey, int], changes: Mapping[AccountKey, int]
) -> InsufficientFunds | None:
    """The first floored account (in key order) the changes would take below zero, or None."""
    for account in sorted(changes):
        balance = balances.get(account, 0)
        if account.kind.floored and balance + changes[account] < 0:
            return InsufficientFunds(account, balance, changes[account])
    return None


def check_limit(cursor: int | None, limit: int) -> None:
    """Refuse a statement page size outside 1..1000 or a cursor that is not a positive int."""
    if type(limit) is not int or not 1 <= limit <= MAX_STATEMENT_LIMIT:
        raise ValueError(f"limit must be 1..{MAX_STATEMENT_LIMIT}")
    if cursor is not None and (type(cursor) is not int or cursor <= 0):
        raise ValueError("cursor must be a positive int")
