"""The reference ledger in memory: the same interface and rules as the PostgreSQL adapter.

It is the ledger of the memory unit of work that the service tests use, and the model the
contract and stateful tests hold the SQL adapter to.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from gpux_billing.domain.audit import Audit, Discrepancy
from gpux_billing.domain.ledger import AccountKey, AccountKind, Transfer, Wallet
from gpux_billing.domain.posting import (
    Posted,
    batch_results,
    check_replay,
    first_shortfall,
    net_changes,
    plan_batch,
)
from gpux_billing.domain.statements import Balance, StatementLine, StatementPage, check_limit
from gpux_contracts.money import Currency


class MemoryLedger:
    """A ledger held in dictionaries; a refused post leaves it unchanged."""

    def __init__(self) -> None:
        self._transfers: dict[str, Transfer] = {}
        self._lines: list[tuple[int, Transfer, int]] = []  # (seq, transfer, entry index)
        self._balances: dict[AccountKey, int] = {}

    async def post(self, transfer: Transfer, *, isolated: bool = False) -> Posted:
        """Post one transfer; an identical replay returns the original."""
        return (await self.post_many([transfer], isolated=isolated))[0]

    async def post_many(
        self, transfers: Sequence[Transfer], *, isolated: bool = False
    ) -> list[Posted]:
        """Post a batch, all or nothing (a refusal changes nothing, isolated or not); floors
        apply to each account's net change."""
        unique, positions = plan_batch(transfers)
        fresh = [t for t in unique if t.id not in self._transfers]
        changes = net_changes(fresh)
        shortfall = first_shortfall(self._balances, changes)
        if shortfall is not None:
            raise shortfall
        # Replays are compared after the floors, where the SQL adapter can compare them.
        outcomes = {t.id: Posted(t, replayed=False) for t in fresh}
        for transfer in unique:
            if transfer.id not in outcomes:
                outcomes[transfer.id] = check_replay(self._transfers[transfer.id], transfer)
        for transfer in fresh:
            self._transfers[transfer.id] = transfer
            for index in range(len(transfer.entries)):
                self._lines.append((len(self._lines) + 1, transfer, index))
        for account, change in changes.items():
            self._balances[account] = self._balances.get(account, 0) + change
        return batch_results(unique, positions, outcomes)

    async def get(self, transfer_id: str) -> Transfer | None:
        """A posted transfer, or None."""
        return self._transfers.get(transfer_id)

    async def balance(self, account: AccountKey) -> int:
        """An account's balance (0 if never used)."""
        return self._balances.get(account, 0)

    async def wallet_balances(self, wallets: Sequence[Wallet]) -> dict[Wallet, tuple[int, int]]:
        """(available, held) micro-units of each wallet (0 for an account never used)."""
        return {
            (owner, currency): (
                self._balances.get(AccountKey(owner, currency, AccountKind.AVAILABLE), 0),
                self._balances.get(AccountKey(owner, currency, AccountKind.HELD), 0),
            )
            for owner, currency in wallets
        }

    async def lock_available(self, wallets: Iterable[Wallet]) -> dict[Wallet, int]:
        """The wallets' available balances, in key order (one unit at a time: no lock needed)."""
        keys = sorted({(owner, currency.value) for owner, currency in wallets})
        return {
            (owner, Currency(c)): self._balances.get(
                AccountKey(owner, Currency(c), AccountKind.AVAILABLE), 0
            )
            for owner, c in keys
        }

    async def lock_owners(self, owners: Sequence[str]) -> None:
        """Nothing to lock: one memory unit runs at a time."""

    async def wallets(self) -> list[Wallet]:
        """Every wallet that has an available or a held account."""
        kinds = (AccountKind.AVAILABLE, AccountKind.HELD)
        return sorted({(a.owner, a.currency) for a in self._balances if a.kind in kinds})

    async def balances(self, owner: str) -> list[Balance]:
        """Every account of an owner, ordered by currency and kind."""
        return [
            Balance(account, amount)
            for account, amount in sorted(self._balances.items())
            if account.owner == owner
        ]

    async def statement(
        self,
        owner: str,
        currency: Currency,
        cursor: int | None = None,
        limit: int = 50,
    ) -> StatementPage:
        """An owner's entries in one currency, newest first."""
        check_limit(cursor, limit)
        picked: list[StatementLine] = []
        for seq, transfer, index in reversed(self._lines):
            entry = transfer.entries[index]
            if cursor is not None and seq >= cursor:
                continue
            if entry.account.owner != owner or entry.account.currency != currency:
                continue
            picked.append(
                StatementLine(
                    seq,
                    transfer.id,
                    transfer.kind,
                    transfer.created_at,
                    entry.account.kind,
                    entry.amount_micros,
                    transfer.reference,
                )
            )
            if len(picked) > limit:
                break
        more = len(picked) > limit
        lines = tuple(picked[:limit])
        return StatementPage(lines, lines[-1].seq if more else None)

    async def verify(self) -> Audit:
        """Recompute every balance from the entries and check every invariant."""
        sums: dict[AccountKey, int] = {}
        totals: dict[Currency, int] = {}
        unbalanced: list[str] = []
        for transfer in self._transfers.values():
            per_currency: dict[Currency, int] = {}
            for entry in transfer.entries:
                currency = entry.account.currency
                sums[entry.account] = sums.get(entry.account, 0) + entry.amount_micros
                per_currency[currency] = per_currency.get(currency, 0) + entry.amount_micros
                totals[currency] = totals.get(currency, 0) + entry.amount_micros
            if any(per_currency.values()):
                unbalanced.append(transfer.id)
        discrepancies = [
            Discrepancy(account, self._balances.get(account, 0), sums.get(account, 0))
            for account in sorted(set(sums) | set(self._balances))
            if self._balances.get(account, 0) != sums.get(account, 0)
        ]
        below = [a for a, b in sorted(self._balances.items()) if a.kind.floored and b < 0]
        return Audit(
            tuple(discrepancies),
            tuple(sorted(unbalanced)),
            (),
            tuple(below),
            tuple(sorted(totals.items())),
        )
