"""The ledger's audit: every balance recomputed from the entries, every invariant checked."""

from __future__ import annotations

from dataclasses import dataclass

from gpux_billing.domain.ledger import AccountKey
from gpux_contracts.money import Currency


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
