"""Accounts: sign-up (an account and its first key, announced on ``gateway.accounts``), and
the calling account; a status change is announced the same way."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from gpux_contracts.accounts import AccountChanged, AccountStatus
from gpux_contracts.ids import new_id
from gpux_contracts.topics import ACCOUNTS
from gpux_gateway.accounts.repository import AccountRow
from gpux_gateway.accounts.schemas import AccountOut, SignedUp, SignUp, account_out
from gpux_gateway.domain.access import scopes_for_new_key
from gpux_gateway.domain.idempotency import Once, Outcome
from gpux_gateway.keys import service as keys
from gpux_gateway.service.access import found, not_found
from gpux_gateway.service.commands import envelope
from gpux_gateway.service.idempotency import run_once
from gpux_gateway.service.unit_of_work import GatewayUnitOfWork
from gpux_platform.broker import Outgoing


def account_changed(account: AccountRow, now: datetime) -> Outgoing:
    """The compacted accounts event for an account's current state."""
    payload = AccountChanged(
        account_id=account.id, name=account.name, roles=account.roles, status=account.status
    )
    return Outgoing(ACCOUNTS, account.id, envelope(payload, new_id(), now))


async def sign_up(
    uow: GatewayUnitOfWork,
    pepper: bytes,
    *,
    body: SignUp,
    material: keys.Material,
    once: Once,
) -> Outcome:
    """A new active account with its first key (every scope its roles allow), once per key."""

    async def make() -> tuple[int, dict[str, Any]]:
        roles = tuple(sorted(set(body.roles)))
        account = AccountRow(new_id(), body.name, roles, AccountStatus.ACTIVE, uow.now)
        await uow.accounts.add(account)
        issued = await keys.issue(
            uow,
            pepper,
            account_id=account.id,
            name="first key",
            scopes=scopes_for_new_key(roles, None),
            material=material,
        )
        uow.outbox.add(account_changed(account, uow.now))
        out = SignedUp(api_key="", key=issued.key, account=account_out(account))
        return 201, out.model_dump(mode="json", exclude={"api_key"})

    return await run_once(uow, once, make)


async def get(uow: GatewayUnitOfWork, account_id: str) -> AccountOut:
    """One account's public view."""
    account = await uow.accounts.get(account_id)
    if account is None:  # pragma: no cover - a key always has its account
        raise not_found("no such account")
    return account_out(account)


async def set_status(uow: GatewayUnitOfWork, account_id: str, status: AccountStatus) -> AccountOut:
    """Suspend or reactivate an account and announce it; 404 for an unknown account."""
    account = found(await uow.accounts.set_status(account_id, status, uow.now), "account")
    uow.outbox.add(account_changed(account, uow.now))
    return account_out(account)
