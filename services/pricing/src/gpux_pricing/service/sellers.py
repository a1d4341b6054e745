"""Who may sell: each account's status and roles, from ``gateway.accounts``."""

from __future__ import annotations

from gpux_contracts.accounts import AccountChanged, Role
from gpux_contracts.events import Envelope
from gpux_pricing.service.unit_of_work import PricingUnitOfWork


async def on_account_changed(uow: PricingUnitOfWork, event: Envelope[AccountChanged]) -> None:
    """Remember whether an account may sell."""
    account = event.payload
    await uow.sellers.upsert(
        account.account_id, account.status, is_seller=Role.SELLER in account.roles
    )
