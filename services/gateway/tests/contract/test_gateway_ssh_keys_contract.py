"""The ssh_keys repository on both stores: one key once per account, pages, reads and deletes
that answer only the account's own keys."""

from __future__ import annotations

from dataclasses import replace

import pytest

from gpux_contracts.ids import new_id
from gpux_gateway.adapters.memory.unit_of_work import EPOCH
from gpux_gateway.domain.ssh_keys import SshKeyType
from gpux_gateway.ssh_keys.repository import SshKeyRow

from .accounts import an_account
from .conftest import Units

pytestmark = pytest.mark.integration


def a_key(account_id: str, fingerprint: str) -> SshKeyRow:
    return SshKeyRow(
        id=new_id(),
        account_id=account_id,
        name="laptop",
        type=SshKeyType.ED25519,
        public_key="ssh-ed25519 AAAA",
        fingerprint=fingerprint,
        bits=None,
        comment="me@laptop",
        created_at=EPOCH,
    )


async def test_a_fingerprint_is_stored_once_per_account(units: Units) -> None:
    alice, bob = await an_account(units), await an_account(units)
    first = a_key(alice, "SHA256:one")
    async with units() as uow:
        assert await uow.ssh_keys.add(first) == first
        assert await uow.ssh_keys.add(replace(first, id=new_id(), name="again")) == first
        bobs = a_key(bob, "SHA256:one")
        assert await uow.ssh_keys.add(bobs) == bobs
        await uow.commit()
    async with units() as uow:
        assert await uow.ssh_keys.page(alice, None, 10) == [first]


async def test_pages_reads_and_deletes_are_the_accounts_own(units: Units) -> None:
    alice, bob = await an_account(units), await an_account(units)
    # In id order (ids made in one millisecond need not sort as they were made).
    mine = sorted((a_key(alice, f"SHA256:{i}") for i in range(3)), key=lambda k: k.id)
    theirs = a_key(bob, "SHA256:b")
    async with units() as uow:
        for key in [*mine, theirs]:
            await uow.ssh_keys.add(key)
        await uow.commit()
    async with units() as uow:
        assert await uow.ssh_keys.page(alice, None, 2) == mine[:2]
        assert await uow.ssh_keys.page(alice, mine[1].id, 2) == mine[2:]
        assert await uow.ssh_keys.get(alice, mine[0].id) == mine[0]
        assert await uow.ssh_keys.get(alice, theirs.id) is None
        assert not await uow.ssh_keys.delete(alice, theirs.id)
        assert await uow.ssh_keys.delete(alice, mine[0].id)
        assert not await uow.ssh_keys.delete(alice, mine[0].id)
        await uow.commit()
    async with units() as uow:
        assert await uow.ssh_keys.page(alice, None, 10) == mine[1:]
        assert await uow.ssh_keys.get(bob, theirs.id) == theirs
