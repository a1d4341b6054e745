"""The gateway split by role on one database: an ``api`` process serves the API, a ``views``
process keeps the PostgreSQL views. An order's status consumed by the views process shows in
the api process's ``GET /v1/orders/{id}``; the api process is a member of no view group (it
never joins ``gateway.orders-status``), and it reads the view groups' lag from Kafka."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiokafka.admin import AIOKafkaAdminClient

from gpux_contracts.orders import OrderStatus
from gpux_contracts.topics import ORDERS_STATUS, REGISTRY
from gpux_devinfra.testing.http import account, auth, get_until
from gpux_devinfra.testing.kafka import publish_payloads
from gpux_devinfra.testing.payloads import order_status
from gpux_devinfra.testing.services import Running, running
from gpux_devinfra.testing.waiting import eventually
from gpux_gateway.bootstrap import SPEC
from gpux_gateway.entrypoints.backpressure import GroupLag
from gpux_gateway.entrypoints.kafka import GROUPS, view_groups
from gpux_platform.broker import ensure_topics
from gpux_platform.settings import GpuxSettings

ORDER = {"gpu": "rtx-4090", "gpus": 2, "type": "market", "currency": "USD"}


@pytest.fixture(scope="module")
async def split(module_settings: GpuxSettings) -> AsyncIterator[tuple[Running, Running]]:
    """An api process, then a views process, on this module's database and topics (each
    applies the migrations it finds missing, under the migrations' lock)."""
    async with (
        running(
            SPEC, module_settings, gateway_role="api", anonymous_rate_limit="10000/minute"
        ) as api,
        running(SPEC, module_settings, gateway_role="views") as views,
    ):
        yield api, views


async def members(settings: GpuxSettings, group: str) -> list[dict[str, Any]]:
    """The members of ``group`` (its name without the namespace) now."""
    admin = AIOKafkaAdminClient(bootstrap_servers=settings.kafka_bootstrap)
    await admin.start()
    try:
        (response,) = await admin.describe_consumer_groups([settings.group(group)])
    finally:
        await admin.close()
    (described,) = response.to_object()["groups"]
    found: list[dict[str, Any]] = described["members"]
    return found


async def test_a_status_consumed_by_the_views_process_shows_in_the_api_process(
    split: tuple[Running, Running],
) -> None:
    api, views = split
    async with api.client() as client:
        key = await account(client, "buyer")
        buyer_id = (await client.get("/v1/accounts/me", headers=auth(key))).json()["id"]
        placed = await client.post("/v1/orders", json=ORDER, headers=auth(key))
        assert placed.status_code == 202, placed.text
        order_id = placed.json()["id"]
        report = order_status(order_id, OrderStatus.FILLED, buyer_id=buyer_id, filled=2)
        await publish_payloads(api.settings, ORDERS_STATUS, "matching", [(report.gpu, report)])
        seen = await get_until(
            client, f"/v1/orders/{order_id}", lambda body: body["status"] == "filled", key=key
        )
    assert (seen["filled_gpus"], seen["remaining_gpus"]) == (2, 0)
    # The views process joined every view group alone: the api process joined none.
    for group in GROUPS.values():
        assert len(await members(views.settings, group)) == 1, group


async def test_the_views_process_answers_health_and_metrics_but_no_api(
    split: tuple[Running, Running],
) -> None:
    _, views = split
    async with views.client() as client:
        ready = await client.get("/readyz")
        metrics = await client.get("/metrics")
        orders = await client.get("/v1/orders")
    assert ready.status_code == 200, ready.text
    assert "gpux_consumer_lag" in metrics.text
    assert orders.status_code == 404


async def test_the_lag_of_view_groups_is_read_from_kafka(
    second_module_settings: GpuxSettings,
) -> None:
    """Records on a view topic that no group has read yet are all behind; once a group
    committed past them, none is."""
    settings = second_module_settings
    await ensure_topics(settings, REGISTRY)
    reports = [order_status(f"o{n}", OrderStatus.OPEN, remaining=1) for n in range(3)]
    await publish_payloads(settings, ORDERS_STATUS, "matching", [(r.gpu, r) for r in reports])
    async with GroupLag(settings, view_groups(settings)) as lag:
        behind = await lag.read()
    topic = settings.topic(ORDERS_STATUS)
    assert sum(n for part, n in behind.items() if part.startswith(f"{topic}:")) == 3
    assert sum(behind.values()) == 3
    assert len(behind) == sum(t.partitions for t in REGISTRY if t in GROUPS)
    async with (
        running(SPEC, settings, gateway_role="views"),
        GroupLag(settings, view_groups(settings)) as lag,
    ):
        await eventually(lag.read, lambda read: sum(read.values()) == 0, what="the views caught up")
