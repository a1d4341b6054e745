"""Accounts, keys and idempotent responses in memory."""

from __future__ import annotations

import dataclasses
from datetime import datetime

from gpux_contracts.accounts import AccountStatus
from gpux_gateway.accounts.repository import AccountRow
from gpux_gateway.adapters.memory.state import OwnedRows, StateRepository
from gpux_gateway.domain.idempotency import StoredResponse
from gpux_gateway.keys.repository import KeyRow

KEYS = OwnedRows[KeyRow](lambda s: s.keys, lambda k: k.account_id, "key")


class MemoryAccounts(StateRepository):
    """Accounts in ``GatewayState.accounts``."""

    async def add(self, account: AccountRow) -> None:
        """Store a new account (an id used before is refused, like a primary key)."""
        if account.id in self._state.accounts:
            raise ValueError(f"account {account.id} exists")
        self._state.accounts[account.id] = account

    async def get(self, account_id: str) -> AccountRow | None:
        """One account, or None."""
        return self._state.accounts.get(account_id)

    async def set_status(
        self, account_id: str, status: AccountStatus, now: datetime
    ) -> AccountRow | None:
        """Change an account's status; None when there is no such account."""
        account = self._state.accounts.get(account_id)
        if account is None:
            return None
        changed = dataclasses.replace(account, status=status)
        self._state.accounts[account_id] = changed
        return changed


class MemoryKeys(StateRepository):
    """API key digests in ``GatewayState.keys``."""

    async def add(self, key: KeyRow) -> None:
        """Store a new key's digest (its account must exist, like the foreign key)."""
        KEYS.add(self._state, key)

    async def with_account(self, key_id: str) -> tuple[KeyRow, AccountRow] | None:
        """A key and its account, for authentication."""
        key = self._state.keys.get(key_id)
        return None if key is None else (key, self._state.accounts[key.account_id])

    async def of_account(self, account_id: str) -> list[KeyRow]:
        """An account's keys, in id order."""
        return sorted(KEYS.of(self._state, account_id), key=lambda k: k.id)

    async def revoke(self, account_id: str, key_id: str, now: datetime) -> KeyRow | None:
        """Revoke one of the account's keys (once); the key as it now stands, or None."""
        key = KEYS.get(self._state, account_id, key_id)
        if key is None:
            return None
        if key.revoked_at is None:
            key = dataclasses.replace(key, revoked_at=now)
            self._state.keys[key_id] = key
        return key


class MemoryIdempotency(StateRepository):
    """Responses in ``GatewayState.responses`` (one unit at a time: the lock holds nothing)."""

    async def claim(self, scope: str, key: str, not_before: datetime) -> StoredResponse | None:
        """The stored response under the key, if it is still kept (nothing to hold: memory
        units do not run concurrently)."""
        found = self._state.responses.get((scope, key))
        if found is None or found[1] < not_before:
            return None
        return found[0]

    async def store(self, scope: str, key: str, response: StoredResponse, now: datetime) -> None:
        """Keep a response for replays (replacing an expired one under the same key)."""
        self._state.responses[(scope, key)] = (response, now)

    async def purge(self, before: datetime) -> int:
        """Forget responses stored before ``before``; returns how many."""
        old = [k for k, (_, at) in self._state.responses.items() if at < before]
        for k in old:
            del self._state.responses[k]
        return len(old)
