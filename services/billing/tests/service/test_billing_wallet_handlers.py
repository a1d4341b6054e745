"""Credits and top-ups (``service.wallets``) on the memory unit of work."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from gpux_billing.adapters.memory.unit_of_work import MemoryBillingUnitOfWork
from gpux_billing.domain.rules import Rules
from gpux_billing.service import HANDLERS_BY_TOPIC
from gpux_contracts.billing import TopupConfirmRequested, TopupRequested
from gpux_contracts.events import wrap
from gpux_contracts.money import Currency
from gpux_contracts.topics import BILLING_COMMANDS
from gpux_devinfra.testing.payloads import credit_requested
from gpux_platform.batches import BatchHandler, Outcome

from .billing_desk import Desk

pytestmark = pytest.mark.unit


def topup(account: str, amount: str, provider: str = "dev", topup_id: str = "t1") -> Any:
    return TopupRequested(
        topup_id=topup_id,
        account_id=account,
        amount=Decimal(amount),
        currency=Currency.USD,
        provider=provider,
    )


def confirm(topup_id: str = "t1") -> TopupConfirmRequested:
    return TopupConfirmRequested(topup_id=topup_id, confirmed_by="admin")


async def test_a_credit_books_once_and_announces_the_balance(desk: Desk) -> None:
    credit = credit_requested("b1", "4.50", credit_id="c1", reference="goodwill")
    command = wrap(credit, producer="gateway", occurred_at=desk.uow.now)
    outcome = await desk.run(BILLING_COMMANDS, command, command)  # a redelivery in the same batch
    assert (outcome.applied, outcome.duplicate, outcome.units) == (1, 1, 1)
    assert await desk.run(BILLING_COMMANDS, command) == Outcome(duplicate=1, units=1)
    assert await desk.funds("b1") == (4_500_000, 0)
    assert [p["available"] for p in desk.published("balance.changed")] == ["4.50"]
    (posted,) = desk.published("ledger.posted")
    assert posted["transfer_id"] == "credit:c1"
    assert posted["reference"] == "credit by admin: goodwill"
    assert desk.uow.refreshed == [[("b1", Currency.USD)]]  # once, after its unit committed
    assert (await desk.uow.ledger.verify()).ok


async def test_a_batch_of_credits_is_one_unit_with_a_balance_event_each(desk: Desk) -> None:
    credits = [
        credit_requested(f"b{n % 3}", 1, credit_id=f"c{n}", reference="batch") for n in range(9)
    ]
    outcome = await desk.run(BILLING_COMMANDS, *credits)
    assert (outcome.applied, outcome.units, desk.uow.commits) == (9, 1, 1)
    assert [p["available"] for p in desk.published("balance.changed")] == [
        f"{n // 3 + 1}.00" for n in range(9)
    ]
    assert [await desk.funds(f"b{n}") for n in range(3)] == [(3_000_000, 0)] * 3
    assert desk.uow.refreshed == [[(f"b{n}", Currency.USD) for n in range(3)]]


async def test_a_dev_topup_books_at_once(desk: Desk) -> None:
    await desk.run(BILLING_COMMANDS, topup("b1", "25.50"))
    assert await desk.funds("b1") == (25_500_000, 0)
    stored = await desk.uow.wallets.topup("t1")
    assert stored is not None
    assert stored.status == "booked"
    # The same top-up id again (another command id) books nothing more.
    await desk.run(BILLING_COMMANDS, topup("b1", "25.50"))
    assert await desk.funds("b1") == (25_500_000, 0)


async def test_dev_topups_and_unknown_providers_are_refused(desk: Desk) -> None:
    uow = MemoryBillingUnitOfWork(clock=desk.clock, rules=Rules(dev_topups=False))
    handler = BatchHandler(BILLING_COMMANDS, HANDLERS_BY_TOPIC[BILLING_COMMANDS], lambda: uow)
    event = wrap(topup("b1", "5"), producer="gateway", occurred_at=desk.clock.now())
    await handler.apply([event])
    stored = await uow.wallets.topup("t1")
    assert stored is not None
    assert stored.status == "rejected"
    assert await uow.ledger.balances("b1") == []
    refused = wrap(topup("b2", "5", "wire", "t2"), producer="gateway", occurred_at=desk.clock.now())
    await handler.apply([refused])
    unknown = await uow.wallets.topup("t2")
    assert unknown is not None
    assert unknown.status == "rejected"


async def test_a_manual_topup_waits_for_the_admin(desk: Desk) -> None:
    await desk.run(BILLING_COMMANDS, topup("b1", "10", "manual"))
    assert await desk.funds("b1") == (0, 0)
    await desk.run(BILLING_COMMANDS, confirm())
    assert await desk.funds("b1") == (10_000_000, 0)
    await desk.run(BILLING_COMMANDS, confirm())  # a second confirmation books nothing more
    assert await desk.funds("b1") == (10_000_000, 0)


async def test_a_confirmation_before_its_request_is_kept_until_the_request_comes(
    desk: Desk,
) -> None:
    await desk.run(BILLING_COMMANDS, confirm("early"))
    assert await desk.funds("b1") == (0, 0)
    await desk.run(BILLING_COMMANDS, topup("b1", "1", "manual", "early"))
    assert await desk.funds("b1") == (1_000_000, 0)


async def test_a_topup_id_of_another_account_books_nothing(desk: Desk) -> None:
    await desk.run(BILLING_COMMANDS, topup("b1", "10", "manual"))
    await desk.run(BILLING_COMMANDS, topup("intruder", "10", "dev"))
    assert await desk.funds("intruder") == (0, 0)
    await desk.run(BILLING_COMMANDS, confirm())
    assert await desk.funds("b1") == (10_000_000, 0)
