"""The webhook dispatcher's loop: woken by the recorder's ``gateway_account_events``
notification, and polling every ``webhooks_poll_s`` for retries that fell due; replicas share
the queue (``FOR UPDATE SKIP LOCKED``)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from datetime import timedelta
from typing import Any

import asyncpg

from gpux_gateway.adapters.postgres.account_events import CHANNEL
from gpux_gateway.adapters.webhook_sender import HttpWebhooks, WebhookTargets
from gpux_gateway.config import GatewaySettings
from gpux_gateway.domain.webhooks import RetryPolicy
from gpux_gateway.entrypoints.context import Gateway
from gpux_gateway.webhooks.dispatch import DispatchConfig, Sender, dispatch_once
from gpux_platform.waiting import woken

log = logging.getLogger("gpux.gateway.webhooks")
TIMEOUT_S = 10.0
"""A receiver answers within this, or the attempt fails."""


def dispatch_config(settings: GatewaySettings) -> DispatchConfig:
    """The dispatcher's retry schedule and batch from the settings."""
    policy = RetryPolicy(
        base_s=settings.webhooks_retry_base_s,
        cap_s=settings.webhooks_retry_cap_s,
        retry_for=timedelta(seconds=settings.webhooks_retry_for_s),
    )
    return DispatchConfig(
        policy=policy,
        batch=settings.webhooks_parallel,
        hold=timedelta(seconds=TIMEOUT_S * 3),
    )


async def drain(gw: Gateway, sender: Sender, config: DispatchConfig) -> None:
    """Send rounds until one takes less than a full batch; a failed round is logged."""
    try:
        while await dispatch_once(gw.unit_of_work, sender, gw.clock, config) >= config.batch:
            pass
    except Exception:
        log.exception("webhook dispatch round failed")


async def dispatch_loop(gw: Gateway, pool: asyncpg.Pool) -> None:
    """Dispatch due deliveries until cancelled: at each notification, else every poll."""
    settings = gw.settings
    config = dispatch_config(settings)
    sender = HttpWebhooks(
        WebhookTargets(allow_private=settings.webhooks_allow_private), timeout_s=TIMEOUT_S
    )
    wake = asyncio.Event()

    def notified(*_: Any) -> None:
        wake.set()

    async with pool.acquire() as conn:
        await conn.add_listener(CHANNEL, notified)
        try:
            while True:
                await drain(gw, sender, config)
                await woken(wake, settings.webhooks_poll_s)
                wake.clear()
        finally:
            await sender.aclose()
            with contextlib.suppress(Exception):
                await conn.remove_listener(CHANNEL, notified)
