"""Buyers' SSH public keys in memory."""

from __future__ import annotations

from collections.abc import Sequence

from gpux_gateway.adapters.memory.state import GatewayState, id_page
from gpux_gateway.ssh_keys.repository import SshKeyRow


class MemorySshKeys:
    """SSH keys in ``GatewayState.ssh_keys``."""

    def __init__(self, state: GatewayState) -> None:
        self._state = state

    def _of(self, account_id: str) -> list[SshKeyRow]:
        return [k for k in self._state.ssh_keys.values() if k.account_id == account_id]

    async def add(self, key: SshKeyRow) -> SshKeyRow:
        """Store a new key (its account must exist, like the foreign key); the stored row
        when the account has a key with its fingerprint (the unique constraint)."""
        if key.id in self._state.ssh_keys or key.account_id not in self._state.accounts:
            raise ValueError(f"ssh key {key.id}: exists, or no account {key.account_id}")
        for existing in self._of(key.account_id):
            if existing.fingerprint == key.fingerprint:
                return existing
        self._state.ssh_keys[key.id] = key
        return key

    async def page(self, account_id: str, after: str | None, limit: int) -> list[SshKeyRow]:
        """Up to ``limit`` of the account's keys in id order, after the cursor id."""
        return id_page(self._of(account_id), after, limit)

    async def get(self, account_id: str, key_id: str) -> SshKeyRow | None:
        """One of the account's keys, or None."""
        key = self._state.ssh_keys.get(key_id)
        return key if key is not None and key.account_id == account_id else None

    async def listed(self, account_id: str, key_ids: Sequence[str] | None) -> list[SshKeyRow]:
        """The account's keys among ``key_ids`` (None: all of them), in id order."""
        keys = self._of(account_id)
        chosen = keys if key_ids is None else [k for k in keys if k.id in set(key_ids)]
        return sorted(chosen, key=lambda k: k.id)

    async def delete(self, account_id: str, key_id: str) -> bool:
        """Delete one of the account's keys; False when it has no such key."""
        if await self.get(account_id, key_id) is None:
            return False
        del self._state.ssh_keys[key_id]
        return True
