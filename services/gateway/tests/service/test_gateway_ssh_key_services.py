"""The SSH keys resource on the memory unit of work: register, the duplicate's 409,
idempotent replays, pages, reads and deletes, all within the caller's account."""

from __future__ import annotations

from datetime import timedelta

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519

from gpux_contracts.accounts import Role
from gpux_gateway.adapters.memory.unit_of_work import EPOCH, MemoryGatewayUnitOfWork
from gpux_gateway.domain.idempotency import Once
from gpux_gateway.domain.ssh_keys import SshPublicKey, parse
from gpux_gateway.ssh_keys import service
from gpux_platform.problems import ProblemError

from .units import with_accounts

pytestmark = pytest.mark.unit

ALICE, BOB = "acct-alice", "acct-bob"


def new_key() -> SshPublicKey:
    line = (
        ed25519.Ed25519PrivateKey.generate()
        .public_key()
        .public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH)
    )
    return parse(line.decode())


def unit() -> MemoryGatewayUnitOfWork:
    return with_accounts({ALICE: Role.BUYER, BOB: Role.BUYER})


def once(key: str | None, fingerprint: str = "body-1") -> Once:
    return Once(scope=ALICE, key=key, fingerprint=fingerprint, ttl=timedelta(hours=48))


async def test_register_stores_the_parsed_key() -> None:
    uow, key = unit(), new_key()
    async with uow:
        outcome = await service.create(uow, ALICE, name="laptop", key=key, once=once(None))
        await uow.commit()
    assert outcome.status_code == 201
    stored = uow.state.ssh_keys[outcome.body["id"]]
    assert (stored.account_id, stored.name, stored.fingerprint) == (
        ALICE,
        "laptop",
        key.fingerprint,
    )
    assert outcome.body["created_at"] == EPOCH.isoformat().replace("+00:00", "Z")


async def test_the_same_key_twice_is_409_naming_the_first_and_stores_nothing() -> None:
    uow, key = unit(), new_key()
    async with uow:
        first = await service.register(uow, ALICE, name="a", key=key)
        await uow.commit()
    async with uow:
        with pytest.raises(ProblemError) as refused:
            await service.register(uow, ALICE, name="b", key=key)
    assert refused.value.status == 409
    assert first.id in (refused.value.detail or "")
    assert list(uow.state.ssh_keys) == [first.id]
    async with uow:
        theirs = await service.register(uow, BOB, name="a", key=key)
        await uow.commit()
    assert theirs.id != first.id


async def test_an_idempotency_key_replays_the_first_answer() -> None:
    uow, key = unit(), new_key()
    answers = []
    for _ in range(2):
        async with uow:
            answers.append(await service.create(uow, ALICE, name="a", key=key, once=once("k1")))
            await uow.commit()
    assert [a.replayed for a in answers] == [False, True]
    assert answers[0].body == answers[1].body
    assert len(uow.state.ssh_keys) == 1


async def test_pages_reads_and_deletes_are_the_accounts_own() -> None:
    uow = unit()
    async with uow:
        mine = [await service.register(uow, ALICE, name=str(i), key=new_key()) for i in range(3)]
        theirs = await service.register(uow, BOB, name="b", key=new_key())
        await uow.commit()
    async with uow:
        first = await service.page(uow, ALICE, limit=2, cursor=None)
        rest = await service.page(uow, ALICE, limit=2, cursor=first.next_cursor)
        assert (await service.get(uow, ALICE, mine[0].id)) == mine[0]
        for call in (service.get, service.delete):
            with pytest.raises(ProblemError) as refused:
                await call(uow, ALICE, theirs.id)
            assert refused.value.status == 404
        await service.delete(uow, ALICE, mine[1].id)
        await uow.commit()
    assert [k.id for k in first.items + rest.items] == sorted(k.id for k in mine)
    assert rest.next_cursor is None
    assert set(uow.state.ssh_keys) == {mine[0].id, mine[2].id, theirs.id}
