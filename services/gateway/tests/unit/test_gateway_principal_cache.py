"""The key cache: bounded, dropped on change, and never refilled by a read older than a change."""

from __future__ import annotations

import pytest

from gpux_contracts.accounts import AccountStatus, Role
from gpux_gateway.domain.access import Principal, Scope
from gpux_gateway.readmodels.principals import CachedKey, PrincipalCache

pytestmark = pytest.mark.unit

ACCOUNTS, KEYS = "ns.gateway.accounts", "ns.gateway.keys"


def entry(key_id: str, account_id: str = "acct-1", *, revoked: bool = False) -> CachedKey:
    principal = Principal(
        account_id, frozenset({Role.BUYER}), frozenset({Scope.READ}), key_id, AccountStatus.ACTIVE
    )
    return CachedKey(b"digest-" + key_id.encode(), revoked, principal)


def test_a_kept_entry_is_found_and_the_least_recently_used_goes_first() -> None:
    cache = PrincipalCache(ACCOUNTS, KEYS, capacity=2)
    assert cache.put(entry("k1"), cache.epoch)
    assert cache.put(entry("k2"), cache.epoch)
    assert cache.get("k1") == entry("k1")  # k1 is now the most recently used
    assert cache.put(entry("k3"), cache.epoch)
    assert (cache.get("k1"), cache.get("k2"), cache.get("k3")) == (entry("k1"), None, entry("k3"))
    assert len(cache) == 2


def test_a_changed_key_or_account_is_dropped() -> None:
    cache = PrincipalCache(ACCOUNTS, KEYS)
    for key_id, account_id in (("k1", "a1"), ("k2", "a1"), ("k3", "a2")):
        cache.put(entry(key_id, account_id), cache.epoch)
    cache.forget_key("k3")
    assert cache.get("k3") is None
    cache.forget_account("a1")
    assert (cache.get("k1"), cache.get("k2")) == (None, None)
    assert len(cache) == 0


def test_records_of_either_topic_drop_their_key_whatever_they_hold() -> None:
    cache = PrincipalCache(ACCOUNTS, KEYS)
    cache.put(entry("k1", "a1"), cache.epoch)
    cache.put(entry("k2", "a2"), cache.epoch)
    cache.apply(KEYS, 0, 0, b"k1", b"not even json")
    cache.apply(ACCOUNTS, 1, 0, b"a2", None)  # a tombstone
    assert (cache.get("k1"), cache.get("k2")) == (None, None)
    cache.apply(KEYS, 0, 1, None, b"{}")
    assert cache.rejected == 1


def test_a_read_begun_before_a_change_of_its_key_or_account_is_not_kept() -> None:
    cache = PrincipalCache(ACCOUNTS, KEYS)
    since = cache.epoch
    cache.forget_key("k1")
    assert not cache.put(entry("k1"), since)
    since = cache.epoch
    cache.forget_account("acct-1")
    assert not cache.put(entry("k1", "acct-1"), since)
    assert cache.get("k1") is None
    since = cache.epoch
    cache.forget_key("other")  # a change of anything else does not matter
    assert cache.put(entry("k1"), since)
    cache.forget_key("k1")
    assert cache.put(entry("k1"), cache.epoch)  # nor does one before a read began


def test_a_read_older_than_the_changes_still_told_apart_is_not_kept() -> None:
    cache = PrincipalCache(ACCOUNTS, KEYS, capacity=2)
    since = cache.epoch
    for name in ("x1", "x2", "x3"):  # x1's change is no longer told apart
        cache.forget_key(name)
    assert not cache.put(entry("x1"), since)
    assert not cache.put(entry("k9"), since)  # k9 may have changed too, for all it knows
    assert cache.put(entry("k9"), cache.epoch)
