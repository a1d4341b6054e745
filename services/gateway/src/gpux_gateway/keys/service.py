"""API keys: who a presented key stands for, issuing (idempotently), listing and revoking."""

from __future__ import annotations

import secrets
from collections.abc import Iterable
from typing import Any

from gpux_contracts.accounts import AccountStatus, Role
from gpux_gateway.domain import keys
from gpux_gateway.domain.access import AccessError, Principal, Scope, scopes_for_new_key
from gpux_gateway.domain.idempotency import Once, Outcome
from gpux_gateway.keys.repository import KeyRow
from gpux_gateway.keys.schemas import KeyCreated, KeyOut, NewKey, key_out
from gpux_gateway.service.access import not_found, problem_from, unauthorized
from gpux_gateway.service.idempotency import run_once
from gpux_gateway.service.unit_of_work import GatewayUnitOfWork

Material = tuple[str, str]
"""A new key's id and secret."""


async def authenticate(uow: GatewayUnitOfWork, pepper: bytes, token: str) -> Principal:
    """The account a presented key stands for, or a 401 problem."""
    parsed = keys.parse_key(token)
    if parsed is None:
        raise unauthorized("not a gpux API key")
    found = await uow.keys.with_account(parsed.key_id)
    if found is None:
        raise unauthorized("unknown API key")
    key, account = found
    if not keys.matches(pepper, parsed.secret, key.digest):
        raise unauthorized("unknown API key")
    if key.revoked_at is not None:
        raise unauthorized("this API key was revoked")
    return Principal(
        account.id,
        frozenset(account.roles),
        key.scopes,
        key.id,
        status=AccountStatus(account.status),
    )


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


async def of_account(uow: GatewayUnitOfWork, account_id: str) -> list[KeyOut]:
    """The account's keys, in id order."""
    return [key_out(k) for k in await uow.keys.of_account(account_id)]


async def revoke(uow: GatewayUnitOfWork, account_id: str, key_id: str) -> None:
    """Revoke one of the account's keys; 404 for any other key."""
    if not await uow.keys.revoke(account_id, key_id, uow.now):
        raise not_found("no such key")
