"""The re-buy of an interrupted lease where the roles are split: the ``views`` process that
reads the lease's end places the order and publishes its ``order.placed`` with a relay of its
own, with no ``api`` process running to relay it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from gpux_contracts.leases import LeaseEndReason
from gpux_contracts.topics import BILLING_LEASES, ORDERS_COMMANDS
from gpux_devinfra.testing.http import account, auth, get_until
from gpux_devinfra.testing.kafka import publish_payloads, published
from gpux_devinfra.testing.services import running
from gpux_gateway.bootstrap import SPEC
from gpux_gateway.domain.rebuy import rebuy_order_id
from gpux_platform.settings import GpuxSettings

from ..lease_events import hourly_totals, lease_ended, lease_opened

ORDER: dict[str, Any] = {
    "gpu": "rtx-4090",
    "gpus": 2,
    "type": "limit",
    "max_price_per_gpu_hour": "0.9000",
    "currency": "USD",
    "tier": "interruptible",
    "rebuy_on_interruption": True,
}


async def test_a_views_process_alone_places_and_publishes_the_rebuy(
    module_settings: GpuxSettings,
) -> None:
    api_role: dict[str, Any] = {"gateway_role": "api", "anonymous_rate_limit": "10000/minute"}
    async with running(SPEC, module_settings, **api_role) as api, api.client() as client:
        key = await account(client, "buyer")
        buyer_id = (await client.get("/v1/accounts/me", headers=auth(key))).json()["id"]
        placed = await client.post("/v1/orders", json=ORDER, headers=auth(key))
        assert placed.status_code == 202, placed.text
        order_id = placed.json()["id"]
    start = datetime.now(UTC) - timedelta(minutes=3)
    lease = lease_opened(
        buyer_id, "seller-1", lease_id=f"{order_id}:b1", order_id=order_id,
        tier="interruptible", gpus=2, started_at=start,
    )  # fmt: skip
    ended = lease_ended(lease, hourly_totals(start, 1), reason=LeaseEndReason.INTERRUPTED)
    again_id = rebuy_order_id(lease.lease_id)
    async with running(SPEC, module_settings, gateway_role="views") as views:
        events = [(lease.lease_id, lease), (lease.lease_id, ended)]
        await publish_payloads(views.settings, BILLING_LEASES, "billing", events)
        found = await published(
            views.settings,
            ORDERS_COMMANDS,
            lambda body: body["payload"].get("order_id") == again_id,
            settle_s=1.0,
            timeout_s=30.0,
        )
    assert [(r.body["event_type"], r.body["payload"]["rebuy_of"]) for r in found] == [
        ("order.placed", lease.lease_id)
    ]
    async with running(SPEC, module_settings, **api_role) as api, api.client() as client:
        shown = await get_until(client, f"/v1/orders/{again_id}", lambda b: "id" in b, key=key)
    assert (shown["rebuy_of"], shown["gpus"], shown["status"]) == (
        lease.lease_id,
        2,
        "pending_funds",
    )
