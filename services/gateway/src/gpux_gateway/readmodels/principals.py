"""Who each recently used API key stands for, kept in memory so a request needs no PostgreSQL
round trip to authenticate.

An entry is filled from PostgreSQL the first time a key is presented (``keys.service``) and
holds the key's digest (never its secret), its scopes, whether it was revoked, and its
account's roles and status. The cache is bounded (least recently used entries go first).

Every instance reads ``gateway.accounts`` and ``gateway.keys`` whole, without a group
(``gpux_platform.compacted``): a record for an account or a key drops what the cache holds
of it, so a revocation or a suspension made on any instance is refused here too once its
event arrives (the instance that made it drops its entries as its unit of work commits).
Dropping is always safe: the next request reads PostgreSQL again.

A read that began before a change and ends after its event would put the old state back.
Each change therefore gets a number (``epoch``); a read notes the epoch it began at and its
result is kept only if neither its key nor its account changed since.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass

from gpux_contracts.topics import ACCOUNTS, KEYS
from gpux_gateway.domain.access import Principal
from gpux_platform.broker import Outgoing
from gpux_platform.compacted import CompactedView

CAPACITY = 100_000
"""Entries kept by default (about 300 bytes each)."""


@dataclass(frozen=True, slots=True)
class CachedKey:
    """What authenticating a key needs: its digest, whether it was revoked, who it stands for."""

    digest: bytes
    revoked: bool
    principal: Principal

    @property
    def key_id(self) -> str:
        """The key's id."""
        assert self.principal.key_id is not None
        return self.principal.key_id

    @property
    def account_id(self) -> str:
        """The key's account."""
        assert self.principal.account_id is not None
        return self.principal.account_id


def _key(key_id: str) -> str:
    return f"k:{key_id}"


def _account(account_id: str) -> str:
    return f"a:{account_id}"


class PrincipalCache(CompactedView):
    """Recently used keys by id (bounded, least recently used first out), dropped on change."""

    def __init__(self, accounts_topic: str, keys_topic: str, capacity: int = CAPACITY) -> None:
        super().__init__(accounts_topic, keys_topic)
        self._accounts_topic = accounts_topic
        self.capacity = capacity
        self._entries: OrderedDict[str, CachedKey] = OrderedDict()
        self._by_account: dict[str, set[str]] = {}
        self._changed: OrderedDict[str, int] = OrderedDict()
        self._epoch = 0
        self._forgotten = 0
        """The newest change no longer in ``_changed``: reads begun before it are not kept."""

    @property
    def epoch(self) -> int:
        """The number of the latest change seen; a read notes it before it begins."""
        return self._epoch

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key_id: str) -> CachedKey | None:
        """The cached entry of a key, if any (it becomes the most recently used)."""
        entry = self._entries.get(key_id)
        if entry is not None:
            self._entries.move_to_end(key_id)
        return entry

    def put(self, entry: CachedKey, since: int) -> bool:
        """Keep an entry read from PostgreSQL by a read begun at epoch ``since``, unless its
        key or its account changed since; False when it was not kept."""
        if since < self._forgotten:
            return False
        changes = self._changed
        if changes.get(_key(entry.key_id), 0) > since:
            return False
        if changes.get(_account(entry.account_id), 0) > since:
            return False
        self._drop_key(entry.key_id)
        self._entries[entry.key_id] = entry
        self._by_account.setdefault(entry.account_id, set()).add(entry.key_id)
        while len(self._entries) > self.capacity:
            oldest = next(iter(self._entries))
            self._drop_key(oldest)
        return True

    def forget_key(self, key_id: str) -> None:
        """A key changed: drop its entry."""
        self._note(_key(key_id))
        self._drop_key(key_id)

    def forget_account(self, account_id: str) -> None:
        """An account changed: drop the entries of all its keys."""
        self._note(_account(account_id))
        for key_id in self._by_account.pop(account_id, set()):
            self._entries.pop(key_id, None)

    def forget_committed(self, messages: Iterable[Outgoing]) -> None:
        """Drop what this instance's own committed changes make stale, before their events
        come back from Kafka."""
        for message in messages:
            if message.topic is ACCOUNTS:
                self.forget_account(message.key)
            elif message.topic is KEYS:
                self.forget_key(message.key)

    def apply(
        self, topic: str, partition: int, offset: int, key: bytes | None, value: bytes | None
    ) -> None:
        """Take one record of either topic: its key (an account or key id) is dropped.

        The value is not read: whatever the change, dropping is right, and a replay of the
        whole topic at start-up costs no decoding.
        """
        self._read(topic, partition, offset)
        if key is None or topic not in self.topics:
            self._reject(topic, offset, "a record without a key, or of another topic")
            return
        name = key.decode(errors="replace")
        if topic == self._accounts_topic:
            self.forget_account(name)
        else:
            self.forget_key(name)

    def _note(self, name: str) -> None:
        self._epoch += 1
        self._changed[name] = self._epoch
        self._changed.move_to_end(name)
        while len(self._changed) > self.capacity:
            _, at = self._changed.popitem(last=False)
            self._forgotten = max(self._forgotten, at)

    def _drop_key(self, key_id: str) -> None:
        entry = self._entries.pop(key_id, None)
        if entry is None:
            return
        keys = self._by_account.get(entry.account_id)
        if keys is not None:
            keys.discard(key_id)
            if not keys:
                del self._by_account[entry.account_id]
