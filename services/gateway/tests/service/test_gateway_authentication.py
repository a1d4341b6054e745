"""Authentication from the key cache: a known key costs no unit of work, and this instance's
own revocations and suspensions are refused as soon as they commit."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, replace
from datetime import timedelta

import pytest

from gpux_contracts.accounts import AccountStatus, ApiKeyChanged, ApiKeyStatus, Role
from gpux_contracts.topics import KEYS
from gpux_gateway.accounts import service as accounts
from gpux_gateway.accounts.schemas import SignUp
from gpux_gateway.adapters.memory.unit_of_work import MemoryGatewayUnitOfWork
from gpux_gateway.domain import keys as key_format
from gpux_gateway.domain.access import Principal
from gpux_gateway.domain.idempotency import Once
from gpux_gateway.keys import service as keys
from gpux_gateway.readmodels.principals import PrincipalCache
from gpux_gateway.service.unit_of_work import GatewayUnitOfWork
from gpux_platform.problems import ProblemError

pytestmark = pytest.mark.unit

PEPPER = b"pepper"


class Units:
    """Opens the memory unit of work and counts how often it did."""

    def __init__(self, uow: MemoryGatewayUnitOfWork) -> None:
        self.uow = uow
        self.opened = 0

    def __call__(self) -> AbstractAsyncContextManager[GatewayUnitOfWork]:
        return self._open()

    @asynccontextmanager
    async def _open(self) -> AsyncIterator[GatewayUnitOfWork]:
        self.opened += 1
        async with self.uow as uow:
            yield uow


@dataclass
class Buyer:
    """A signed-up buyer, with the cache its units' commits feed."""

    units: Units
    cache: PrincipalCache
    account_id: str
    key_id: str
    api_key: str

    async def authenticate(self) -> Principal:
        return await keys.authenticate(self.cache, self.units, PEPPER, self.api_key)


async def buyer() -> Buyer:
    cache = PrincipalCache("gateway.accounts", "gateway.keys")
    uow = MemoryGatewayUnitOfWork(committed=cache.forget_committed)
    material = keys.new_material(PEPPER, "anonymous", None)
    async with uow:
        outcome = await accounts.sign_up(
            uow,
            PEPPER,
            body=SignUp(name="acme", roles=[Role.BUYER]),
            material=material,
            once=Once("anonymous", None, "f", timedelta(hours=48)),
        )
        await uow.commit()
    body = outcome.body
    api_key = key_format.format_key(*material)
    return Buyer(Units(uow), cache, body["account"]["id"], body["key"]["id"], api_key)


async def test_a_key_read_once_is_answered_from_memory() -> None:
    b = await buyer()
    first = await b.authenticate()
    again = await b.authenticate()
    assert first == again
    assert first.account_id == b.account_id
    assert b.units.opened == 1  # the second request read nothing
    forged = key_format.format_key(b.key_id, key_format.secret_from_bytes(b"\0" * 32))
    with pytest.raises(ProblemError) as refused:
        await keys.authenticate(b.cache, b.units, PEPPER, forged)
    assert (refused.value.status, refused.value.detail) == (401, "unknown API key")
    assert b.units.opened == 1  # a wrong secret is told from the cached digest


async def test_a_revocation_is_refused_as_soon_as_it_commits_and_announced() -> None:
    b = await buyer()
    await b.authenticate()
    async with b.units.uow as uow:
        await keys.revoke(uow, b.account_id, b.key_id)
        await uow.commit()
    with pytest.raises(ProblemError) as revoked:
        await b.authenticate()
    assert revoked.value.detail == "this API key was revoked"
    announced = b.units.uow.published[-1]
    assert (announced.topic, announced.key) == (KEYS, b.key_id)
    payload = announced.envelope.payload
    assert isinstance(payload, ApiKeyChanged)
    assert (payload.account_id, payload.status) == (b.account_id, ApiKeyStatus.REVOKED)
    opened = b.units.opened
    with pytest.raises(ProblemError):
        await b.authenticate()
    assert b.units.opened == opened  # a revoked key is cached as revoked


async def test_a_suspension_shows_as_soon_as_it_commits() -> None:
    b = await buyer()
    assert (await b.authenticate()).status is AccountStatus.ACTIVE
    async with b.units.uow as uow:
        await accounts.set_status(uow, b.account_id, AccountStatus.SUSPENDED)
        await uow.commit()
    assert (await b.authenticate()).status is AccountStatus.SUSPENDED


async def test_a_change_made_elsewhere_is_refused_once_its_event_is_read() -> None:
    b = await buyer()
    await b.authenticate()
    state = b.units.uow.state  # another instance revokes the key in the shared database
    state.keys[b.key_id] = replace(state.keys[b.key_id], revoked_at=b.units.uow.now)
    assert (await b.authenticate()).key_id == b.key_id  # this instance has not heard yet
    b.cache.apply("gateway.keys", 0, 0, b.key_id.encode(), b"{}")
    with pytest.raises(ProblemError) as revoked:
        await b.authenticate()
    assert revoked.value.detail == "this API key was revoked"
