"""Posting a batch of transfers: replays, balance floors on net changes, what a post returns.

Both ledger stores (``adapters.postgres.ledger`` and ``adapters.memory.ledger``) post by
these rules, and one contract test suite holds them to it.

A batch (``post_many``) is all or nothing, and balance floors apply to each account's
balance after the whole batch (its net change), exactly as for a single transfer. A batch's
new transfers are checked against the floors before its replays are compared (the SQL
adapter can only compare replays after its one statement); for a single transfer the order
cannot matter, since a replayed id posts nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from gpux_billing.domain.ledger import AccountKey, InsufficientFunds, Transfer, TransferMismatch


@dataclass(frozen=True, slots=True)
class Posted:
    """The outcome of posting: the transfer as stored, and whether it was already there."""

    transfer: Transfer
    replayed: bool


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
