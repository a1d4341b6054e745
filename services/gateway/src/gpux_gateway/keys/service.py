"""API keys: who a presented key stands for, issuing (idempotently), listing and revoking.

Who a key stands for is answered from the instance's ``PrincipalCache`` once the key was
read from PostgreSQL; issuing and revoking announce the key on ``gateway.keys``, and every
instance drops what it holds of a key or an account when it reads its event.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from gpux_contracts.accounts import AccountStatus, ApiKeyChanged, ApiKeyStatus, Role
from gpux_contracts.ids import new_id
from gpux_contracts.topics import KEYS
from gpux_gateway.domain import keys
from gpux_gateway.domain.access import AccessError, Principal, Scope, scopes_for_new_key
from gpux_gateway.domain.idempotency import Once, Outcome
from gpux_gateway.keys.repository import KeyRow
from gpux_gateway.keys.schemas import KeyCreated, KeyList, NewKey, key_out
from gpux_gateway.readmodels.principals import CachedKey, PrincipalCache
from gpux_gateway.service.access import found, problem_from, unauthorized
from gpux_gateway.service.commands import envelope
from gpux_gateway.service.idempotency import run_once
from gpux_gateway.service.unit_of_work import GatewayUnitOfWork, UnitOfWorkFactory
from gpux_platform.broker import Outgoing

Material = tuple[str, str]
"""A new key's id and secret."""


async def authenticate(
    principals: PrincipalCache, open_unit: UnitOfWorkFactory, pepper: bytes, token: str
) -> Principal:
    """The account a presented key stands for, or a 401 problem.

    A key the cache holds needs no PostgreSQL round trip; another is read in a unit of its
    own and cached (a revoked key too: revocation is for good).
    """
    parsed = keys.parse_key(token)
    if parsed is None:
        raise unauthorized("not a gpux API key")
    cached = principals.get(parsed.key_id)
    if cached is None:
        since = principals.epoch
        async with open_unit() as uow:
            cached = await cached_key(uow, parsed.key_id)
        if cached is None:
            raise unauthorized("unknown API key")
        principals.put(cached, since)
    if not keys.matches(pepper, parsed.secret, cached.digest):
        raise unauthorized("unknown API key")
    if cached.revoked:
        raise unauthorized("this API key was revoked")
    return cached.principal


async def cached_key(uow: GatewayUnitOfWork, key_id: str) -> CachedKey | None:
    """What authenticating the key needs, as stored now (None: no such key)."""
    found = await uow.keys.with_account(key_id)
    if found is None:
        return None
    key, account = found
    principal = Principal(
        account.id,
        frozenset(account.roles),
        key.scopes,
        key.id,
        status=AccountStatus(account.status),
    )
    return CachedKey(key.digest, key.revoked_at is not None, principal)


def key_changed(key: KeyRow, now: datetime) -> Outgoing:
    """The compacted keys event for a key's current state."""
    revoked = key.revoked_at is not None
    payload = ApiKeyChanged(
        key_id=key.id,
        account_id=key.account_id,
        status=ApiKeyStatus.REVOKED if revoked else ApiKeyStatus.ACTIVE,
        changed_at=key.revoked_at or key.created_at,
    )
    return Outgoing(KEYS, key.id, envelope(payload, new_id(), now))


def new_material(pepper: bytes, scope: str, idem_key: str | None) -> Material:
    """A new key's id and secret: random, or derived from the request's Idempotency-Key.

    Derived, a replay can show the same key again without its secret ever being stored.
    """
    raw = keys.derived_material(pepper, scope, idem_key) if idem_key else secrets.token_bytes(64)
    return keys.key_id_from_bytes(raw[:32]), keys.secret_from_bytes(raw[32:])


async def issue(
    uow: GatewayUnitOfWork,
    pepper: bytes,
    *,
    account_id: str,
    name: str,
    scopes: frozenset[Scope],
    material: Material,
) -> KeyCreated:
    """Store a new key's digest for the account; the answer holds the whole key."""
    key_id, secret = material
    row = KeyRow(key_id, account_id, name, keys.digest(pepper, secret), scopes, uow.now, None)
    await uow.keys.add(row)
    uow.outbox.add(key_changed(row, uow.now))
    return KeyCreated(api_key=keys.format_key(key_id, secret), key=key_out(row))


def scopes_of(roles: Iterable[Role], body: NewKey) -> frozenset[Scope]:
    """The scopes a new key gets, or a problem when the account may not give them."""
    try:
        return scopes_for_new_key(roles, body.scopes)
    except AccessError as exc:
        raise problem_from(exc) from None


async def create(
    uow: GatewayUnitOfWork,
    pepper: bytes,
    *,
    account_id: str,
    body: NewKey,
    scopes: frozenset[Scope],
    material: Material,
    once: Once,
) -> Outcome:
    """Issue a key once per Idempotency-Key (the stored answer never holds the secret)."""

    async def make() -> tuple[int, dict[str, Any]]:
        issued = await issue(
            uow, pepper, account_id=account_id, name=body.name, scopes=scopes, material=material
        )
        return 201, issued.model_dump(mode="json", exclude={"api_key"})

    return await run_once(uow, once, make)


async def of_account(uow: GatewayUnitOfWork, account_id: str) -> KeyList:
    """The account's keys, in id order."""
    return KeyList(items=[key_out(k) for k in await uow.keys.of_account(account_id)])


async def revoke(uow: GatewayUnitOfWork, account_id: str, key_id: str) -> None:
    """Revoke one of the account's keys and announce it; 404 for any other key."""
    revoked = found(await uow.keys.revoke(account_id, key_id, uow.now), "key")
    uow.outbox.add(key_changed(revoked, uow.now))
