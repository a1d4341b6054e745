"""Browser sessions: signing in with an API key, who a session cookie stands for, listing and
revoking.

A session stands for the API key it was opened with: its account, roles and scopes, read
through the same principal cache as the key's own requests, so revoking the key (or
suspending the account) ends its sessions too. Sessions are read from PostgreSQL on every
request: a revocation holds on every instance at once, and browsers make few requests.
"""

from __future__ import annotations

import dataclasses
import secrets
from datetime import timedelta

from gpux_gateway.domain import sessions as rules
from gpux_gateway.domain.access import Principal
from gpux_gateway.keys import service as keys
from gpux_gateway.readmodels.principals import PrincipalCache
from gpux_gateway.service.access import found, unauthorized
from gpux_gateway.service.unit_of_work import UnitOfWorkFactory
from gpux_gateway.sessions.repository import SessionRow
from gpux_gateway.sessions.schemas import SessionCreated, SessionOut, session_out

LIST_LIMIT = 100
"""The most sessions a listing shows (the newest)."""


async def sign_in(
    principals: PrincipalCache,
    open_unit: UnitOfWorkFactory,
    pepper: bytes,
    *,
    api_key: str,
    user_agent: str,
    ttl: timedelta,
) -> tuple[SessionCreated, str]:
    """Open a session for a valid API key; the answer and the cookie's value."""
    principal = await keys.authenticate(principals, open_unit, pepper, api_key)
    if principal.account_id is None or principal.key_id is None:
        raise unauthorized("only an account's API key opens a session")
    made = rules.new_session(secrets.token_bytes(42))
    async with open_unit() as uow:
        row = SessionRow(
            id=made.session_id,
            account_id=principal.account_id,
            key_id=principal.key_id,
            digest=rules.digest(pepper, made.secret),
            user_agent=user_agent[:500],
            created_at=uow.now,
            expires_at=uow.now + ttl,
            revoked_at=None,
        )
        await uow.sessions.add(row)
        await uow.commit()
    out = session_out(row, row.id)
    created = SessionCreated(**out.model_dump(), csrf_token=rules.csrf_token(pepper, made.secret))
    return created, rules.format_cookie(made.session_id, made.secret)


async def authenticate(
    principals: PrincipalCache, open_unit: UnitOfWorkFactory, pepper: bytes, cookie: str
) -> tuple[Principal, rules.ParsedSession]:
    """Who a session cookie stands for (the principal names the session), or a 401 problem."""
    parsed = rules.parse_cookie(cookie)
    if parsed is None:
        raise unauthorized("not a gpux session; sign in again")
    async with open_unit() as uow:
        row = await uow.sessions.get(parsed.session_id)
        now = uow.now
        cached = principals.get(row.key_id) if row is not None else None
        if row is not None and cached is None:
            since = principals.epoch
            cached = await keys.cached_key(uow, row.key_id)
            if cached is not None:
                principals.put(cached, since)
    if row is None or not rules.matches(pepper, parsed.secret, row.digest):
        raise unauthorized("unknown session; sign in again")
    if row.revoked_at is not None or row.expires_at <= now:
        raise unauthorized("this session has ended; sign in again")
    if cached is None or cached.revoked:
        raise unauthorized("the API key of this session was revoked; sign in again")
    return dataclasses.replace(cached.principal, session_id=row.id), parsed


async def listed(
    open_unit: UnitOfWorkFactory, account_id: str, current: str | None
) -> list[SessionOut]:
    """The account's live sessions, newest first."""
    async with open_unit() as uow:
        rows = await uow.sessions.active(account_id, uow.now, LIST_LIMIT)
    return [session_out(row, current) for row in rows]


async def revoke(open_unit: UnitOfWorkFactory, account_id: str, session_id: str) -> None:
    """End one of the account's sessions; 404 for any other."""
    async with open_unit() as uow:
        revoked = await uow.sessions.revoke(account_id, session_id, uow.now)
        await uow.commit()
    found(True if revoked else None, "session")
