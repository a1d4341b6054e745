"""Buyers' SSH public keys in memory."""

from __future__ import annotations

from collections.abc import Sequence

from gpux_gateway.adapters.memory.state import OwnedRows, StateRepository
from gpux_gateway.ssh_keys.repository import SshKeyRow

SSH_KEYS = OwnedRows[SshKeyRow](lambda s: s.ssh_keys, lambda k: k.account_id, "ssh key")


class MemorySshKeys(StateRepository):
    """SSH keys in ``GatewayState.ssh_keys``."""

    async def add(self, key: SshKeyRow) -> SshKeyRow:
        """Store a new key (its account must exist, like the foreign key); the stored row
        when the account has a key with its fingerprint (the unique constraint)."""
        if key.id in self._state.ssh_keys or key.account_id not in self._state.accounts:
            raise ValueError(f"ssh key {key.id}: exists, or no account {key.account_id}")
        for existing in SSH_KEYS.of(self._state, key.account_id):
            if existing.fingerprint == key.fingerprint:
                return existing
        self._state.ssh_keys[key.id] = key
        return key

    async def page(self, account_id: str, after: str | None, limit: int) -> list[SshKeyRow]:
        """Up to ``limit`` of the account's keys in id order, after the cursor id."""
        return SSH_KEYS.page(self._state, account_id, after, limit)

    async def get(self, account_id: str, key_id: str) -> SshKeyRow | None:
        """One of the account's keys, or None."""
        return SSH_KEYS.get(self._state, account_id, key_id)

    async def listed(self, account_id: str, key_ids: Sequence[str] | None) -> list[SshKeyRow]:
        """The account's keys among ``key_ids`` (None: all of them), in id order."""
        keys = SSH_KEYS.of(self._state, account_id)
        chosen = keys if key_ids is None else [k for k in keys if k.id in set(key_ids)]
        return sorted(chosen, key=lambda k: k.id)

    async def delete(self, account_id: str, key_id: str) -> bool:
        """Delete one of the account's keys; False when it has no such key."""
        return SSH_KEYS.delete(self._state, account_id, key_id)
