"""Billing's balances in Redis come back by themselves after Redis restarts empty, with no change
to the wallet and no restart of billing (found by the chaos suite: a buyer who did not trade
again after a Redis restart saw an empty balance list while the ledger held the money).

Billing runs on a Redis of this test's own (the shared one is never restarted): a credit is
booked and shown in ``balances:<account>``; Redis is restarted (no persistence: it keeps
nothing); the balance is back within a few seconds, rebuilt from the ledger.
"""

from __future__ import annotations

from decimal import Decimal

import pytest
from redis.asyncio import Redis

from gpux_billing.bootstrap import SPEC
from gpux_contracts.events import wrap
from gpux_contracts.money import Currency
from gpux_contracts.topics import BILLING_COMMANDS, REGISTRY
from gpux_devinfra.testing.kafka import publish
from gpux_devinfra.testing.payloads import credit_requested
from gpux_devinfra.testing.services import running
from gpux_devinfra.testing.stores import PrivateStore
from gpux_devinfra.testing.waiting import eventually
from gpux_platform.broker import ensure_topics
from gpux_platform.clock import SystemClock
from gpux_platform.redis_keys import BALANCES
from gpux_platform.settings import GpuxSettings

pytestmark = pytest.mark.integration

BUYER = "restart-buyer"


async def _shown(url: str, settings: GpuxSettings) -> bool:
    """Whether ``balances:<buyer>`` shows the credit (asked on a connection of its own: the
    restart closes the ones made before it)."""
    redis = Redis.from_url(url)
    try:
        shown = await redis.hget(settings.redis_key(BALANCES, BUYER), Currency.EUR.value)
    finally:
        await redis.aclose()
    return shown is not None and '"available":"25.00"' in (
        shown.decode() if isinstance(shown, bytes) else str(shown)
    )


async def test_the_balances_are_rebuilt_after_redis_restarts_empty(
    module_settings: GpuxSettings, private_redis: PrivateStore
) -> None:
    await ensure_topics(module_settings, REGISTRY)
    async with running(SPEC, module_settings, redis_url=private_redis.url) as (_, settings):
        url = private_redis.url
        credit = credit_requested(BUYER, "25.00", Currency.EUR, credit_id="restart-credit")
        assert credit.amount == Decimal("25.00")
        event = wrap(credit, producer="gateway", occurred_at=SystemClock().now())
        await publish(module_settings, BILLING_COMMANDS, [(BUYER, event)])
        await eventually(lambda: _shown(url, settings), what="the credited balance")

        await private_redis.restart()
        assert not await _shown(url, settings)  # Redis kept nothing

        await eventually(
            lambda: _shown(url, settings),
            what="the balance rebuilt without any change to the wallet",
            timeout_s=15,
        )
