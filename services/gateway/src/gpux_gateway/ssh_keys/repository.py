"""What the SSH keys resource stores, and the repository that keeps it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from gpux_gateway.domain.ssh_keys import SshKeyType


@dataclass(frozen=True, slots=True)
class SshKeyRow:
    """A registered SSH public key."""

    id: str
    account_id: str
    name: str
    type: SshKeyType
    public_key: str
    fingerprint: str
    bits: int | None
    comment: str
    created_at: datetime


class SshKeysRepository(Protocol):
    """The ssh_keys table; every read and write is the account's own."""

    async def add(self, key: SshKeyRow) -> SshKeyRow:
        """Store a new key; the row stored under its fingerprint when the account has the key
        already (then nothing is stored)."""
        ...

    async def page(self, account_id: str, after: str | None, limit: int) -> list[SshKeyRow]:
        """Up to ``limit`` of the account's keys in id order, after the cursor id."""
        ...

    async def get(self, account_id: str, key_id: str) -> SshKeyRow | None:
        """One of the account's keys, or None."""
        ...

    async def listed(self, account_id: str, key_ids: Sequence[str] | None) -> list[SshKeyRow]:
        """The account's keys among ``key_ids`` (None: all of them), in id order (an id not
        on the account is left out)."""
        ...

    async def delete(self, account_id: str, key_id: str) -> bool:
        """Delete one of the account's keys; False when it has no such key."""
        ...
