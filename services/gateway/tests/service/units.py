"""The memory unit of work the service tests start from: their accounts already stored."""

from __future__ import annotations

from collections.abc import Mapping

from gpux_contracts.accounts import AccountStatus, Role
from gpux_gateway.accounts.repository import AccountRow
from gpux_gateway.adapters.memory.unit_of_work import EPOCH, MemoryGatewayUnitOfWork


def with_accounts(roles: Mapping[str, Role | tuple[Role, ...]]) -> MemoryGatewayUnitOfWork:
    """A memory unit of work (its clock stopped at ``EPOCH``) holding an active account under
    each id, named as its id, with the role or roles given."""
    uow = MemoryGatewayUnitOfWork()
    for account_id, role in roles.items():
        held = (role,) if isinstance(role, Role) else role
        uow.state.accounts[account_id] = AccountRow(
            account_id, account_id, held, AccountStatus.ACTIVE, EPOCH
        )
    return uow
