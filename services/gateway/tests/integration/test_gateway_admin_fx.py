"""An FX rate the admin publishes through the API: one ``fx.rate_published`` on ``fx.rates``
from the gateway's outbox, refused to anyone else, problem+json for a bad body, in the
OpenAPI document."""

from __future__ import annotations

from typing import Any

from gpux_contracts.topics import FX_RATES
from gpux_gateway.admin.schemas import RATE_PATTERN

from .conftest import ADMIN_KEY, RunningGateway, commands_about

BODY = {"base": "GBP", "rate": "1.1800106201", "reason": "ECB feed down since Friday"}


async def test_the_admin_publishes_a_rate_once_per_key(gateway: RunningGateway) -> None:
    headers = {"Idempotency-Key": "fx-rate-0001"}
    async with gateway.client(ADMIN_KEY) as admin:
        first = await admin.post("/v1/admin/fx-rates", json=BODY, headers=headers)
        again = await admin.post("/v1/admin/fx-rates", json=BODY, headers=headers)
    assert first.status_code == 202, first.text
    assert (again.status_code, again.json()) == (202, first.json())
    assert again.headers["Idempotent-Replayed"] == "true"
    accepted = first.json()
    assert (accepted["base"], accepted["quote"], accepted["rate"]) == ("GBP", "EUR", BODY["rate"])
    assert accepted["source"] == "admin: ECB feed down since Friday"
    records = await commands_about(gateway, FX_RATES, "source", accepted["source"], settle_s=2)
    (record,) = [r for r in records if r["event_id"] == accepted["rate_id"]]
    assert record["event_type"] == "fx.rate_published"
    assert record["producer"] == "gateway"
    assert record["payload"]["as_of"] == accepted["as_of"]


async def test_only_the_admin_publishes_rates(gateway: RunningGateway, sign_up: Any) -> None:
    account = await sign_up(["buyer", "seller"])
    async with gateway.client(account["key"]) as client:
        refused = await client.post("/v1/admin/fx-rates", json=BODY)
    async with gateway.client() as anonymous:
        unauthenticated = await anonymous.post("/v1/admin/fx-rates", json=BODY)
    assert (refused.status_code, unauthenticated.status_code) == (403, 401)
    assert refused.headers["content-type"] == "application/problem+json"


async def test_a_bad_rate_is_a_validation_problem_naming_its_field(
    gateway: RunningGateway,
) -> None:
    async with gateway.client(ADMIN_KEY) as admin:
        for bad, field in (
            ({**BODY, "base": "EUR"}, "base"),
            ({**BODY, "rate": "1e3"}, "rate"),
            ({**BODY, "rate": "0"}, "rate"),
            ({"base": "USD", "rate": "0.92"}, "reason"),
        ):
            response = await admin.post("/v1/admin/fx-rates", json=bad)
            assert response.status_code == 422, (bad, response.text)
            assert response.headers["content-type"] == "application/problem+json"
            problem = response.json()
            assert problem["type"].endswith("validation-error"), problem
            assert [e["loc"][-1] for e in problem["errors"]] == [field], problem


async def test_the_operation_is_documented(gateway: RunningGateway) -> None:
    async with gateway.client() as client:
        document = (await client.get("/openapi.json")).json()
    operation = document["paths"]["/v1/admin/fx-rates"]["post"]
    assert operation["tags"] == ["admin"]
    assert "202" in operation["responses"]
    schemas = document["components"]["schemas"]
    assert schemas["FxRateIn"]["properties"]["rate"]["pattern"] == RATE_PATTERN
    assert set(schemas["FxRateAccepted"]["required"]) >= {"base", "quote", "rate", "as_of"}
