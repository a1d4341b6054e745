"""SSH keys: registering (idempotently, one key once per account), listing, reading, deleting.

The key's rules (what is accepted, its fingerprint) are ``domain.ssh_keys``'; every read and
write names the caller's account, so another account's key is a 404.
"""

from __future__ import annotations

from typing import Any

from gpux_contracts.ids import new_id
from gpux_gateway.domain.idempotency import Once, Outcome
from gpux_gateway.domain.ssh_keys import SshPublicKey
from gpux_gateway.entrypoints.schemas import Page, id_page
from gpux_gateway.service.access import found
from gpux_gateway.service.idempotency import run_once
from gpux_gateway.service.unit_of_work import GatewayUnitOfWork
from gpux_gateway.ssh_keys.repository import SshKeyRow
from gpux_gateway.ssh_keys.schemas import SshKeyOut, ssh_key_out
from gpux_platform.problems import ProblemError


def already_registered(existing: SshKeyRow) -> ProblemError:
    """The 409 for a key the account registered before."""
    return ProblemError(
        409,
        "ssh-key-exists",
        "SSH key already registered",
        f"this account registered this key already as {existing.id} ({existing.fingerprint})",
    )


async def register(
    uow: GatewayUnitOfWork, account_id: str, *, name: str, key: SshPublicKey
) -> SshKeyOut:
    """Store the parsed key on the account; a 409 naming the stored key if it has it."""
    row = SshKeyRow(
        id=new_id(),
        account_id=account_id,
        name=name,
        type=key.type,
        public_key=key.public_key,
        fingerprint=key.fingerprint,
        bits=key.bits,
        comment=key.comment,
        created_at=uow.now,
    )
    stored = await uow.ssh_keys.add(row)
    if stored.id != row.id:
        raise already_registered(stored)
    return ssh_key_out(stored)


async def create(
    uow: GatewayUnitOfWork, account_id: str, *, name: str, key: SshPublicKey, once: Once
) -> Outcome:
    """Register a key once per Idempotency-Key."""

    async def make() -> tuple[int, dict[str, Any]]:
        created = await register(uow, account_id, name=name, key=key)
        return 201, created.model_dump(mode="json")

    return await run_once(uow, once, make)


async def page(
    uow: GatewayUnitOfWork, account_id: str, *, limit: int, cursor: str | None
) -> Page[SshKeyOut]:
    """A page of the account's keys, in id order."""
    return id_page(await uow.ssh_keys.page(account_id, cursor, limit + 1), limit, ssh_key_out)


async def get(uow: GatewayUnitOfWork, account_id: str, key_id: str) -> SshKeyOut:
    """One of the account's keys; 404 for any other."""
    return ssh_key_out(found(await uow.ssh_keys.get(account_id, key_id), "ssh key"))


async def delete(uow: GatewayUnitOfWork, account_id: str, key_id: str) -> None:
    """Delete one of the account's keys; 404 for any other."""
    if not await uow.ssh_keys.delete(account_id, key_id):
        found(None, "ssh key")
