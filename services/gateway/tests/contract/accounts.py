"""An account stored on either side of the repository contract, for the rows that belong to
one (its foreign key on PostgreSQL, its memory twin's check)."""

from __future__ import annotations

from gpux_contracts.accounts import AccountStatus, Role
from gpux_contracts.ids import new_id
from gpux_gateway.accounts.repository import AccountRow
from gpux_gateway.adapters.memory.unit_of_work import EPOCH

from .conftest import Units


async def an_account(units: Units, role: Role = Role.BUYER) -> str:
    """A new active account named ``acme`` with the one ``role``, committed; returns its id."""
    account_id = new_id()
    async with units() as uow:
        await uow.accounts.add(AccountRow(account_id, "acme", (role,), AccountStatus.ACTIVE, EPOCH))
        await uow.commit()
    return account_id
