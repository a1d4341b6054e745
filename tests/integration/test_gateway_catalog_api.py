"""The gateway's catalog over HTTP: served from what the catalog service publishes to Kafka."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from gpux_catalog.adapters.files import load_gpu_catalog, load_model_catalog
from gpux_catalog.service.publication import gpu_messages, model_messages
from gpux_devinfra.testing.services import running
from gpux_gateway.bootstrap import SPEC as GATEWAY
from gpux_platform.broker import make_broker, publish_many
from gpux_platform.clock import SystemClock
from gpux_platform.settings import GpuxSettings

PROBLEM = "application/problem+json"


def refused(response: httpx.Response, problem: str = "") -> None:
    """A 422 problem (of the type ending in ``problem``, if given)."""
    assert response.status_code == 422, response.text
    assert response.headers["content-type"] == PROBLEM
    assert response.json()["type"].endswith(problem)


@pytest.fixture(scope="module")
async def gateway_url(module_settings: GpuxSettings) -> AsyncIterator[str]:
    """The gateway alone, in this module's namespace."""
    async with running(GATEWAY, module_settings, anonymous_rate_limit="10000/minute") as (url, _):
        yield url


@pytest.fixture(scope="module")
async def catalog_loaded(gateway_url: str, module_settings: GpuxSettings) -> None:
    """Publish the catalog as the catalog service does, then wait until the gateway serves it."""
    broker = make_broker(module_settings, "catalog")
    await broker.start()
    try:
        gpus, models = load_gpu_catalog(), load_model_catalog()
        now = SystemClock().now()
        await publish_many(
            broker, module_settings, gpu_messages(gpus, now) + model_messages(models, now)
        )
    finally:
        await broker.stop()
    deadline = time.monotonic() + 20
    async with httpx.AsyncClient(base_url=gateway_url, timeout=30) as client:
        while True:
            response = await client.get("/v1/gpus")
            if response.status_code == 200 and len(response.json()["items"]) == len(gpus):
                break
            assert time.monotonic() < deadline, f"catalog never served: {response.text}"
            await asyncio.sleep(0.2)


@pytest.fixture
async def client(gateway_url: str, catalog_loaded: None) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=gateway_url, timeout=30) as http:
        yield http


async def test_every_gpu_is_listed_with_specs_and_fit_and_no_invented_price(
    client: httpx.AsyncClient,
) -> None:
    response = await client.get("/v1/gpus")
    assert response.status_code == 200
    items = response.json()["items"]
    assert {g["id"] for g in items} == set(load_gpu_catalog().ids)
    rtx = next(g for g in items if g["id"] == "rtx-4090")
    assert (rtx["name"], rtx["memory_gb"], rtx["bandwidth_gb_s"]) == ("RTX 4090", 24, 1008)
    assert (rtx["fit"]["qlora_b"], rtx["fit"]["lora16_b"]) == (15, 7)
    assert all(g["best_ask"] == {} for g in items)  # no offers in this module: no price
    assert "RateLimit-Limit" in response.headers  # public, but limited per client address


async def test_one_gpu_and_404_for_an_unknown_one(client: httpx.AsyncClient) -> None:
    h200 = await client.get("/v1/gpus/h200")
    assert h200.status_code == 200
    assert (h200.json()["fit"]["qlora_b"], h200.json()["fit"]["lora16_b"]) == (110, 45)
    missing = await client.get("/v1/gpus/rtx-9999")
    assert missing.status_code == 404
    assert missing.headers["content-type"] == PROBLEM
    assert missing.json()["type"].endswith("/not-found")


async def test_models_are_listed(client: httpx.AsyncClient) -> None:
    response = await client.get("/v1/models")
    assert response.status_code == 200
    ids = [m["id"] for m in response.json()["items"]]
    assert set(ids) == set(load_model_catalog().ids)
    assert ids[0] == "llama-3.2-1b"  # smallest first


async def test_llama_8b_qlora_fits_an_rtx_4090_with_job_hours(client: httpx.AsyncClient) -> None:
    body = {
        "model": "llama-3.1-8b",
        "method": "qlora",
        "dataset": {"examples": 10000, "avg_tokens": 1024, "epochs": 3},
    }
    response = await client.post("/v1/estimates", json=body)
    assert response.status_code == 200, response.text
    answer = response.json()
    memory = answer["memory"]
    parts = [k for k in memory if k.endswith("_gb") and k != "total_gb"]
    assert abs(sum(memory[k] for k in parts) - memory["total_gb"]) < 0.05
    assert 8 < memory["total_gb"] < 16
    rtx = next(g for g in answer["gpus"] if g["gpu_id"] == "rtx-4090")
    assert rtx["fits"]
    assert rtx["headroom_gb"] > 0
    assert rtx["job"]["hours"] > 0
    assert rtx["job"]["num_gpus"] == 1
    assert rtx["job"]["cost"] is None  # nothing is offered in this module: no invented cost
    assert answer["dataset"]["tokens"] == 10000 * 1024 * 3


async def test_a_custom_size_full_fine_tune_does_not_fit_one_small_gpu(
    client: httpx.AsyncClient,
) -> None:
    response = await client.post("/v1/estimates", json={"params_b": 13, "method": "full"})
    assert response.status_code == 200, response.text
    answer = response.json()
    assert answer["model"]["custom"] is True
    assert answer["dataset"] is None
    assert not next(g for g in answer["gpus"] if g["gpu_id"] == "rtx-4090")["fits"]


@pytest.mark.parametrize(
    "body",
    [
        {"model": "gpt-17", "method": "qlora"},  # unknown model
        {"model": "llama-3.1-8b", "method": "qlora", "seq_len": 0},
        {"model": "llama-3.1-8b", "method": "qlora", "colour": "blue"},  # extra field
        {"model": "llama-3.1-8b", "method": "dpo"},
        {"method": "qlora"},  # neither model nor params_b
        {"model": "llama-3.1-8b", "params_b": 8, "method": "qlora"},  # both
        {"params_b": 0.001, "method": "lora"},
    ],
)
async def test_bad_estimate_input_is_a_422_problem(
    client: httpx.AsyncClient, body: dict[str, Any]
) -> None:
    refused(await client.post("/v1/estimates", json=body), "/validation-error")


@pytest.mark.parametrize(
    "raw",
    [
        b'{"params_b": NaN, "method": "qlora"}',
        b'{"model": "llama-3.1-8b", "method": "qlora", '
        b'"dataset": {"examples": 1, "avg_tokens": 1, "epochs": Infinity}}',
    ],
)
async def test_nan_and_infinity_are_refused(client: httpx.AsyncClient, raw: bytes) -> None:
    json_body = {"Content-Type": "application/json"}
    refused(await client.post("/v1/estimates", content=raw, headers=json_body))


async def test_recommendations_are_gpus_that_fit_ranked_by_hours(
    client: httpx.AsyncClient,
) -> None:
    response = await client.get(
        "/v1/recommendations", params={"model": "llama-3.1-70b", "method": "qlora"}
    )
    assert response.status_code == 200, response.text
    answer = response.json()
    assert answer["ranked_by"] == "hours"
    items = answer["items"]
    assert items
    assert [i["rank"] for i in items] == list(range(1, len(items) + 1))
    assert [i["hours"] for i in items] == sorted(i["hours"] for i in items)
    assert all(i["memory_gb"] >= answer["required_gb"] for i in items)
    assert {"h100-sxm", "h200"} <= {i["gpu_id"] for i in items}
    assert "rtx-4090" not in {i["gpu_id"] for i in items}
    assert all(i["cost"] is None for i in items)


@pytest.mark.parametrize(
    "params",
    [
        {"model": "gpt-17", "method": "qlora"},
        {"model": "llama-3.1-8b", "method": "qlora", "seq_len": "0"},
        {"model": "llama-3.1-8b"},
        {"model": "llama-3.1-8b", "method": "qlora", "colour": "blue"},
    ],
)
async def test_bad_recommendation_queries_are_422(
    client: httpx.AsyncClient, params: dict[str, str]
) -> None:
    refused(await client.get("/v1/recommendations", params=params))
