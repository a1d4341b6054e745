"""The gateway's /openapi.json, fuzzed: no 5xx, and every answer fits the documented schema.

The gateway runs as its own process here: schemathesis calls it synchronously, which
would block an in-process server sharing the test's event loop.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.core.result import Err
from schemathesis.specs.openapi.checks import negative_data_rejection, positive_data_acceptance

from gpux_catalog.adapters.files import load_gpu_catalog, load_model_catalog
from gpux_catalog.service.publication import gpu_messages, model_messages
from gpux_contracts.topics import REGISTRY
from gpux_platform.broker import ensure_topics, make_broker, publish_many
from gpux_platform.clock import SystemClock
from gpux_platform.settings import GpuxSettings

STATEFUL_SCENARIOS = 100
"""How many chains the stateful run tries (each a few calls: about ten seconds in all)."""
STATEFUL_STEPS = 6
"""The longest chain of calls in one scenario."""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
async def catalog_published(module_settings: GpuxSettings) -> None:
    # The catalog endpoints answer 503 until the gateway has read the catalog topics.
    await ensure_topics(module_settings, REGISTRY)
    broker = make_broker(module_settings, "catalog")
    await broker.start()
    try:
        now = SystemClock().now()
        records = gpu_messages(load_gpu_catalog(), now) + model_messages(load_model_catalog(), now)
        await publish_many(broker, module_settings, records)
    finally:
        await broker.stop()


@pytest.fixture(scope="module")
def gateway_process(module_settings: GpuxSettings, catalog_published: None) -> Iterator[str]:
    port = _free_port()
    env = {
        **os.environ,
        "GPUX_ENV": "test",
        "GPUX_KAFKA_BOOTSTRAP": module_settings.kafka_bootstrap,
        "GPUX_DATABASE_URL": module_settings.database_url.get_secret_value(),
        "GPUX_REDIS_URL": module_settings.redis_url,
        "GPUX_NAMESPACE": module_settings.namespace,
        "GPUX_HTTP_PORT": str(port),
        "GPUX_RATE_LIMIT": "100000/minute",
        "GPUX_ANONYMOUS_RATE_LIMIT": "100000/minute",
        "GPUX_LOG_LEVEL": "WARNING",
    }
    proc = subprocess.Popen([sys.executable, "-m", "gpux_gateway"], env=env)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            assert proc.poll() is None, "the gateway exited"
            try:
                if httpx.get(f"{url}/readyz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.2)
        _wait_for_catalog(url)
        yield url
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)


def _wait_for_catalog(url: str) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if httpx.get(f"{url}/v1/gpus", timeout=5).status_code == 200:
            return
        time.sleep(0.3)
    raise AssertionError("the gateway never read the catalog")


def _schema(url: str) -> Any:
    # The price stream never ends by design; its behaviour has its own test.
    return schemathesis.openapi.from_url(f"{url}/openapi.json").exclude(path="/v1/stream/prices")


def _operations(url: str) -> list[Any]:
    schema = _schema(url)
    operations = []
    for result in schema.get_all_operations():
        if isinstance(result, Err):
            raise result.err()
        operations.append(result.ok())
    return operations


def _fuzz(operation: Any, headers: dict[str, str], examples: int) -> None:
    @given(case=operation.as_strategy())
    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    def run(case: Any) -> None:
        # A fresh Idempotency-Key per call: reusing one with another body is a 422 by design.
        # Business rules no schema can state (a window in the future, a role) refuse some
        # schema-valid requests, so that one check is left out; all the others run.
        case.call_and_validate(
            headers={**headers, "Idempotency-Key": str(uuid.uuid4())},
            excluded_checks=[positive_data_acceptance],
        )

    run()


def _trader_key(url: str) -> str:
    """A new account with both roles, so authenticated operations are reached too; its key."""
    signed_up = httpx.post(
        f"{url}/v1/accounts", json={"name": "fuzzer", "roles": ["buyer", "seller"]}
    )
    assert signed_up.status_code == 201, signed_up.text
    return str(signed_up.json()["api_key"])


def test_every_operation_conforms_with_and_without_credentials(gateway_process: str) -> None:
    key = _trader_key(gateway_process)
    operations = _operations(gateway_process)
    assert len(operations) >= 10
    for operation in operations:
        _fuzz(operation, {"Authorization": f"Bearer {key}"}, examples=25)
        _fuzz(operation, {}, examples=5)


def test_chains_of_operations_conform_statefully(gateway_process: str) -> None:
    """Calls chained by the links schemathesis infers (an offer made, then read, changed and
    withdrawn by its id; an order placed, read and cancelled...): no 5xx, every answer fits
    the schema. Bounded so that it takes seconds, not minutes."""
    answered: Counter[tuple[str, int]] = Counter()

    class Trader(_schema(gateway_process).as_state_machine()):  # type: ignore[misc]
        def setup(self) -> None:
            # An account per scenario: one may revoke its key or have it suspended.
            self.key = _trader_key(gateway_process)

        def after_call(self, response: Any, case: Any) -> None:
            super().after_call(response, case)
            answered[(case.operation.label, response.status_code)] += 1

        def get_call_kwargs(self, case: Any) -> dict[str, Any]:
            auth = {"Authorization": f"Bearer {self.key}"}
            return {"headers": {**auth, "Idempotency-Key": str(uuid.uuid4())}}

        def validate_response(self, response: Any, case: Any, **kwargs: Any) -> None:
            # As in the stateless run: business rules refuse some schema-valid requests. And
            # the headers a negative case may have broken (the key, the Idempotency-Key) are
            # replaced by valid ones in get_call_kwargs, so "negative data accepted" would
            # judge data that was never sent.
            case.validate_response(
                response,
                excluded_checks=[positive_data_acceptance, negative_data_rejection],
                transport_kwargs=kwargs,
            )

    Trader.run(
        settings=settings(
            max_examples=STATEFUL_SCENARIOS,
            stateful_step_count=STATEFUL_STEPS,
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
            derandomize=True,  # the same chains each run: a failure replays
        )
    )
    # The chains reached the trading operations, not only the refusals around them.
    assert answered[("POST /v1/offers/bulk", 202)] + answered[("POST /v1/offers", 202)] > 0
    assert any(label.startswith("GET /v1/orders") for label, _ in answered), answered
