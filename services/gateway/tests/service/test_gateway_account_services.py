"""Sign-up, keys, authentication and the admin's account changes, on the memory unit of work."""

from __future__ import annotations

from datetime import timedelta

import pytest

from gpux_contracts.accounts import AccountStatus, Role
from gpux_gateway.accounts import service as accounts
from gpux_gateway.accounts.schemas import SignUp
from gpux_gateway.adapters.memory.unit_of_work import MemoryGatewayUnitOfWork
from gpux_gateway.domain import keys as key_format
from gpux_gateway.domain.access import Scope
from gpux_gateway.domain.idempotency import Once, Outcome
from gpux_gateway.keys import service as keys
from gpux_gateway.keys.schemas import NewKey
from gpux_gateway.readmodels.principals import PrincipalCache
from gpux_platform.problems import ProblemError

pytestmark = pytest.mark.unit

PEPPER = b"pepper"
TTL = timedelta(hours=48)


def principals() -> PrincipalCache:
    """An empty key cache (its topics are never read here)."""
    return PrincipalCache("gateway.accounts", "gateway.keys")


def once(key: str | None, fingerprint: str = "body-1", scope: str = "anonymous") -> Once:
    return Once(scope=scope, key=key, fingerprint=fingerprint, ttl=TTL)


async def sign_up(
    uow: MemoryGatewayUnitOfWork, roles: list[Role], key: str | None = None, body: str = "b"
) -> tuple[Outcome, str]:
    """Sign up in a unit of its own; the outcome and the whole API key."""
    material = keys.new_material(PEPPER, "anonymous", key)
    async with uow:
        outcome = await accounts.sign_up(
            uow,
            PEPPER,
            body=SignUp(name="acme", roles=roles),
            material=material,
            once=once(key, body),
        )
        await uow.commit()
    return outcome, key_format.format_key(*material)


async def test_sign_up_makes_an_active_account_with_a_key_and_announces_it() -> None:
    uow = MemoryGatewayUnitOfWork()
    outcome, api_key = await sign_up(uow, [Role.SELLER, Role.BUYER])
    assert outcome.status_code == 201
    assert "api_key" not in outcome.body  # the secret is never stored with the response
    account = outcome.body["account"]
    assert (account["roles"], account["status"]) == (["buyer", "seller"], "active")
    assert [m.envelope.event_type for m in uow.published] == ["api_key.changed", "account.changed"]
    who = await keys.authenticate(principals(), lambda: uow, PEPPER, api_key)
    assert who.account_id == account["id"]
    assert Scope.OFFERS_WRITE in who.scopes
    assert Scope.ORDERS_WRITE in who.scopes


async def test_a_replayed_sign_up_is_the_same_account_and_another_body_is_refused() -> None:
    uow = MemoryGatewayUnitOfWork()
    first, first_key = await sign_up(uow, [Role.BUYER], key="k1")
    again, again_key = await sign_up(uow, [Role.BUYER], key="k1")
    assert (again.replayed, again.body, again_key) == (True, first.body, first_key)
    assert len(uow.state.accounts) == 1
    assert len(uow.published) == 2  # the account and its key, once
    with pytest.raises(ProblemError) as reused:
        await sign_up(uow, [Role.BUYER], key="k1", body="another body")
    assert (reused.value.status, reused.value.slug) == (422, "idempotency-key-reused")


async def test_keys_are_refused_when_malformed_unknown_wrong_or_revoked() -> None:
    uow = MemoryGatewayUnitOfWork()
    outcome, api_key = await sign_up(uow, [Role.BUYER])
    account_id = outcome.body["account"]["id"]
    key_id = outcome.body["key"]["id"]
    forged = key_format.format_key(key_id, key_format.secret_from_bytes(b"\0" * 32))
    unknown = key_format.format_key("a" * 16, key_format.secret_from_bytes(b"\0" * 32))
    for token in ("nonsense", unknown, forged):
        with pytest.raises(ProblemError) as refused:
            await keys.authenticate(principals(), lambda: uow, PEPPER, token)
        assert refused.value.status == 401
    async with uow:
        await keys.revoke(uow, account_id, key_id)
        await uow.commit()
    with pytest.raises(ProblemError) as revoked:
        await keys.authenticate(principals(), lambda: uow, PEPPER, api_key)
    assert revoked.value.detail == "this API key was revoked"
    async with uow:
        with pytest.raises(ProblemError) as missing:
            await keys.revoke(uow, "someone-else", key_id)
        assert missing.value.status == 404


async def test_a_new_key_gets_at_most_the_scopes_the_roles_allow() -> None:
    uow = MemoryGatewayUnitOfWork()
    outcome, _ = await sign_up(uow, [Role.BUYER])
    account_id = outcome.body["account"]["id"]
    with pytest.raises(ProblemError) as refused:
        keys.scopes_of([Role.BUYER], NewKey(scopes=[Scope.OFFERS_WRITE]))
    assert (refused.value.status, refused.value.slug) == (403, "scope-not-allowed")
    scopes = keys.scopes_of([Role.BUYER], NewKey(scopes=[Scope.READ]))
    async with uow:
        made = await keys.create(
            uow,
            PEPPER,
            account_id=account_id,
            body=NewKey(name="ci"),
            scopes=scopes,
            material=keys.new_material(PEPPER, account_id, None),
            once=once(None, scope=account_id),
        )
        await uow.commit()
    assert made.body["key"]["scopes"] == ["read"]
    async with uow:
        listed = (await keys.of_account(uow, account_id)).items
    assert {k.name for k in listed} == {"first key", "ci"}
    assert [k.id for k in listed] == sorted(k.id for k in listed)


async def test_suspending_an_account_announces_it_and_an_unknown_one_is_404() -> None:
    uow = MemoryGatewayUnitOfWork()
    outcome, api_key = await sign_up(uow, [Role.SELLER])
    account_id = outcome.body["account"]["id"]
    async with uow:
        suspended = await accounts.set_status(uow, account_id, AccountStatus.SUSPENDED)
        await uow.commit()
    assert suspended.status is AccountStatus.SUSPENDED
    assert uow.published[-1].envelope.payload.status is AccountStatus.SUSPENDED
    who = await keys.authenticate(principals(), lambda: uow, PEPPER, api_key)
    async with uow:
        with pytest.raises(ProblemError) as unknown:
            await accounts.set_status(uow, "nobody", AccountStatus.ACTIVE)
    assert who.status is AccountStatus.SUSPENDED  # refused by scope checks, not by the key
    assert unknown.value.status == 404
