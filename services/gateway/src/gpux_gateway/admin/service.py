"""What the admin does through the gateway's outbox: credits to an account's wallet (commands
on ``billing.commands``) and FX rates published on ``fx.rates``."""

from __future__ import annotations

import logging
from typing import Any

from gpux_contracts.billing import CreditRequested
from gpux_contracts.fx import RatePublished
from gpux_contracts.money import REFERENCE_CURRENCY
from gpux_contracts.topics import BILLING_COMMANDS, FX_RATES
from gpux_gateway.admin.schemas import CreditAccepted, CreditIn, FxRateAccepted, FxRateIn
from gpux_gateway.domain.idempotency import Once, Outcome
from gpux_gateway.service.access import not_found
from gpux_gateway.service.commands import command_id, send
from gpux_gateway.service.idempotency import run_once
from gpux_gateway.service.unit_of_work import GatewayUnitOfWork

audit = logging.getLogger("gpux.gateway.audit")

ADMIN = "admin"
"""Who an admin request is made by (the one bootstrap admin key): in every event it sends."""


async def credit(uow: GatewayUnitOfWork, *, account_id: str, body: CreditIn, once: Once) -> Outcome:
    """Ask billing to credit an existing account, once per Idempotency-Key."""
    if await uow.accounts.get(account_id) is None:
        raise not_found("no such account")

    async def make() -> tuple[int, dict[str, Any]]:
        credit_id = command_id("admin", once.key, f"credit:{account_id}")
        command = CreditRequested(
            credit_id=credit_id,
            account_id=account_id,
            amount=body.amount,
            currency=body.currency,
            reference=body.reference,
            requested_by=ADMIN,
        )
        send(uow, BILLING_COMMANDS, account_id, command, credit_id)
        accepted = CreditAccepted.model_validate(command, from_attributes=True)
        return 202, accepted.model_dump(mode="json")

    return await run_once(uow, once, make)


def rate_source(reason: str) -> str:
    """A published rate's ``source``: who published it and why (the audit trail of the rate,
    in every consumer's copy and in the outbox row)."""
    return f"{ADMIN}: {reason}"


async def publish_rate(uow: GatewayUnitOfWork, *, body: FxRateIn, once: Once) -> Outcome:
    """Publish an FX rate as of now on ``fx.rates``, once per Idempotency-Key: pricing, matching
    and billing take it as the newest rate of its pair until a newer one comes (the source's
    next rate: the ECB's next working day, or the development file's next read)."""

    async def make() -> tuple[int, dict[str, Any]]:
        rate = RatePublished(
            base=body.base,
            quote=REFERENCE_CURRENCY,
            rate=body.rate,
            as_of=uow.now,
            source=rate_source(body.reason),
        )
        pair = f"{rate.base}/{rate.quote}"
        rate_id = command_id("admin", once.key, f"fx:{pair}")
        send(uow, FX_RATES, pair, rate, rate_id)
        audit.info(
            "the admin published %s = %s as of %s (event %s): %s",
            pair,
            format(rate.rate, "f"),
            rate.as_of.isoformat(),
            rate_id,
            body.reason,
        )
        accepted = FxRateAccepted(**rate.model_dump(), rate_id=rate_id)
        return 202, accepted.model_dump(mode="json")

    return await run_once(uow, once, make)
