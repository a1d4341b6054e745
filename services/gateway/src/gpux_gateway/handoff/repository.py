"""What the access handoff stores: each lease's sealed access details (a tombstone once
erased) and the reports sent for it; and the cipher that seals the details."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Protocol

from gpux_gateway.domain.handoff import Sealed


class ReportKind(StrEnum):
    """A seller's report on a lease that goes to billing (each at most once per lease)."""

    READY = "ready"
    """``lease.ready_reported``: access was posted."""
    FAILURE = "failure"
    """``lease.failure_reported``: the machines cannot be delivered."""


@dataclass(frozen=True, slots=True)
class LeaseAccessRow:
    """A lease's access details as stored: sealed, or erased (``sealed`` None, ``erased_at``
    set) after the retention."""

    lease_id: str
    buyer_id: str
    seller_id: str
    sealed: Sealed | None
    posted_at: datetime
    erased_at: datetime | None = None


class AccessCipher(Protocol):
    """Seals and opens access details (``adapters.access_cipher``); ``associated`` is bound
    to the ciphertext (the lease id)."""

    def seal(self, plaintext: bytes, *, associated: str) -> Sealed:
        """The plaintext sealed with the current key and a fresh nonce."""
        ...

    def open(self, sealed: Sealed, *, associated: str) -> bytes:
        """The plaintext; ``domain.handoff.AccessUnreadable`` if it does not open."""
        ...


class LeaseAccessRepository(Protocol):
    """The lease_access and lease_reports tables (written at once, in the unit)."""

    async def put(self, row: LeaseAccessRow) -> None:
        """Store the lease's sealed details, replacing any posted before."""
        ...

    async def for_buyer(self, buyer_id: str, lease_id: str) -> LeaseAccessRow | None:
        """The details of a lease the account rents (None: none posted, or not its lease)."""
        ...

    async def claim_report(self, lease_id: str, kind: ReportKind, now: datetime) -> bool:
        """Whether this unit is the first to report ``kind`` for the lease (then it is noted;
        a concurrent unit waits for this one and is refused)."""
        ...

    async def erase(self, *, ended_before: datetime, now: datetime) -> int:
        """Erase the sealed details of every lease that ended or failed before
        ``ended_before`` (the rows stay, ``erased_at`` = ``now``); how many were erased."""
        ...
