"""Sign-up, the caller's account, and its API keys."""

import secrets
from typing import Annotated, Any

import asyncpg
from fastapi import APIRouter, Depends, Request, Response
from fastapi.responses import JSONResponse

from gpux_contracts.accounts import AccountChanged, AccountStatus
from gpux_contracts.ids import new_id
from gpux_contracts.topics import ACCOUNTS
from gpux_gateway.adapters import repository
from gpux_gateway.adapters.repository import AccountRow, KeyRow
from gpux_gateway.api.auth import (
    account_id_for,
    anonymous_limit,
    principal_dependency,
    problem_from,
)
from gpux_gateway.api.common import create_once, envelope
from gpux_gateway.api.schemas import (
    AccountOut,
    KeyCreated,
    KeyOut,
    NewKey,
    ResourceId,
    SignedUp,
    SignUp,
)
from gpux_gateway.context import Gateway
from gpux_gateway.domain import keys
from gpux_gateway.domain.access import AccessError, Principal, Scope, scopes_for_new_key
from gpux_gateway.idempotency import IdemKey, check_key
from gpux_platform.broker import Outgoing
from gpux_platform.outbox import add as add_to_outbox
from gpux_platform.problems import ProblemError


def account_out(account: AccountRow) -> AccountOut:
    """The public view of an account."""
    return AccountOut(
        id=account.id,
        name=account.name,
        roles=list(account.roles),
        status=account.status,
        created_at=account.created_at,
    )


def key_out(key: KeyRow) -> KeyOut:
    """The public view of a key (never its secret)."""
    return KeyOut(
        id=key.id,
        name=key.name,
        prefix=f"{keys.PREFIX}_{key.id}",
        scopes=sorted(key.scopes),
        created_at=key.created_at,
        revoked_at=key.revoked_at,
    )


def _new_key_material(gw: Gateway, scope: str, idem_key: str | None) -> tuple[str, str]:
    # With an Idempotency-Key the key is derived, so a replay can show it again unstored.
    raw = keys.derived_material(gw.pepper, scope, idem_key) if idem_key else secrets.token_bytes(64)
    return keys.key_id_from_bytes(raw[:32]), keys.secret_from_bytes(raw[32:])


async def _issue_key(
    gw: Gateway,
    conn: asyncpg.Connection,
    account_id: str,
    name: str,
    scopes: frozenset[Scope],
    material: tuple[str, str],
) -> KeyCreated:
    key_id, secret = material
    row = KeyRow(
        key_id, account_id, name, keys.digest(gw.pepper, secret), scopes, gw.clock.now(), None
    )
    await repository.insert_key(conn, row)
    return KeyCreated(api_key=keys.format_key(key_id, secret), key=key_out(row))


def account_changed(gw: Gateway, account: AccountRow) -> Outgoing:
    """The compacted accounts event for an account's current state."""
    payload = AccountChanged(
        account_id=account.id, name=account.name, roles=account.roles, status=account.status
    )
    return Outgoing(ACCOUNTS, account.id, envelope(gw, payload, new_id()))


def router(gw: Gateway) -> APIRouter:
    """Routes under /v1/accounts."""
    api = APIRouter(prefix="/v1/accounts", tags=["accounts"])
    principal = principal_dependency(gw)

    @api.post(
        "",
        status_code=201,
        response_model=SignedUp,
        dependencies=[Depends(anonymous_limit(gw))],
        summary="Sign up: a new account and its first API key (shown once)",
    )
    async def sign_up(
        body: SignUp, request: Request, idempotency_key: IdemKey = None
    ) -> JSONResponse:
        idem = check_key(idempotency_key)
        scope = "anonymous"
        material = _new_key_material(gw, scope, idem)

        async def create(conn: asyncpg.Connection) -> tuple[int, dict[str, Any]]:
            now = gw.clock.now()
            roles = tuple(sorted(set(body.roles)))
            account = AccountRow(new_id(), body.name, roles, AccountStatus.ACTIVE, now)
            await repository.insert_account(conn, account)
            issued = await _issue_key(
                gw, conn, account.id, "first key", scopes_for_new_key(roles, None), material
            )
            await add_to_outbox(conn, "gateway", [account_changed(gw, account)])
            out = SignedUp(api_key="", key=issued.key, account=account_out(account))
            return 201, out.model_dump(mode="json", exclude={"api_key"})

        return await create_once(
            gw,
            request,
            scope=scope,
            key=idem,
            body=body,
            create=create,
            reveal={"api_key": keys.format_key(*material)},
        )

    @api.get("/me", response_model=AccountOut, summary="The calling account")
    async def me(who: Annotated[Principal, Depends(principal)]) -> AccountOut:
        account_id = account_id_for(who, Scope.READ)
        account = await repository.get_account(gw.pool, account_id)
        if account is None:  # pragma: no cover - a key always has its account
            raise ProblemError(404, "not-found", "Not found", "no such account")
        return account_out(account)

    @api.get("/me/keys", response_model=list[KeyOut], summary="The account's API keys")
    async def list_keys(who: Annotated[Principal, Depends(principal)]) -> list[KeyOut]:
        account_id = account_id_for(who, Scope.READ)
        return [key_out(k) for k in await repository.list_keys(gw.pool, account_id)]

    @api.post("/me/keys", status_code=201, response_model=KeyCreated, summary="Create an API key")
    async def create_key(
        body: NewKey,
        request: Request,
        who: Annotated[Principal, Depends(principal)],
        idempotency_key: IdemKey = None,
    ) -> JSONResponse:
        idem = check_key(idempotency_key)
        account_id = account_id_for(who, Scope.KEYS_MANAGE)
        try:
            scopes = scopes_for_new_key(who.roles, body.scopes)
        except AccessError as exc:
            raise problem_from(exc) from None
        material = _new_key_material(gw, account_id, idem)

        async def create(conn: asyncpg.Connection) -> tuple[int, dict[str, Any]]:
            issued = await _issue_key(gw, conn, account_id, body.name, scopes, material)
            return 201, issued.model_dump(mode="json", exclude={"api_key"})

        return await create_once(
            gw,
            request,
            scope=account_id,
            key=idem,
            body=body,
            create=create,
            reveal={"api_key": keys.format_key(*material)},
        )

    @api.delete("/me/keys/{key_id}", status_code=204, summary="Revoke an API key")
    async def revoke_key(
        key_id: ResourceId, who: Annotated[Principal, Depends(principal)]
    ) -> Response:
        account_id = account_id_for(who, Scope.KEYS_MANAGE)
        if not await repository.revoke_key(gw.pool, account_id, key_id, gw.clock.now()):
            raise ProblemError(404, "not-found", "Not found", "no such key")
        return Response(status_code=204)

    return api
