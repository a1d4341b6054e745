"""What the ledger tells an owner: balances, and statements of entries, newest first."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from gpux_billing.domain.ledger import AccountKey, AccountKind, TransferKind

MAX_STATEMENT_LIMIT = 1000


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


def check_limit(cursor: int | None, limit: int) -> None:
    """Refuse a statement page size outside 1..1000 or a cursor that is not a positive int."""
    if type(limit) is not int or not 1 <= limit <= MAX_STATEMENT_LIMIT:
        raise ValueError(f"limit must be 1..{MAX_STATEMENT_LIMIT}")
    if cursor is not None and (type(cursor) is not int or cursor <= 0):
        raise ValueError("cursor must be a positive int")
