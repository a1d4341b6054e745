"""An offer's provisioning timeout through the API, against the real infrastructure: the
default, 0 and a stated timeout shown by GET /v1/offers and /v1/offers/{id} and sent on
``offer.submitted``; a timeout below the minimum (or above the maximum) a 422 problem."""

from __future__ import annotations

from typing import Any

from gpux_contracts.offers import DEFAULT_PROVISIONING_TIMEOUT_SECONDS
from gpux_contracts.topics import OFFERS_COMMANDS

from .conftest import commands_about

FIELD = "provisioning_timeout_seconds"


async def test_an_offer_shows_and_sends_its_provisioning_timeout(
    gateway: Any, sign_up: Any, offer_body: dict[str, Any]
) -> None:
    seller = await sign_up(["seller"])
    bodies = [offer_body, {**offer_body, FIELD: 0}, {**offer_body, FIELD: 3600}]
    async with gateway.client(seller["key"]) as client:
        made = [await client.post("/v1/offers", json=body) for body in bodies]
        assert [m.status_code for m in made] == [202, 202, 202], [m.text for m in made]
        ids = [m.json()["id"] for m in made]
        one = [(await client.get(f"/v1/offers/{offer_id}")).json() for offer_id in ids]
        listed = (await client.get("/v1/offers")).json()["items"]
    expected = [DEFAULT_PROVISIONING_TIMEOUT_SECONDS, 0, 3600]
    assert [m.json()[FIELD] for m in made] == expected
    assert [o[FIELD] for o in one] == expected
    assert {o["id"]: o[FIELD] for o in listed} == dict(zip(ids, expected, strict=True))
    for offer_id, seconds in zip(ids, expected, strict=True):
        (sent,) = await commands_about(gateway, OFFERS_COMMANDS, "offer_id", offer_id, 1.0)
        assert sent["payload"][FIELD] == seconds


async def test_a_timeout_out_of_bounds_is_a_422_problem_naming_the_field(
    gateway: Any, sign_up: Any, offer_body: dict[str, Any]
) -> None:
    seller = await sign_up(["seller"])
    async with gateway.client(seller["key"]) as client:
        refused = [
            await client.post("/v1/offers", json={**offer_body, FIELD: seconds})
            for seconds in (30, 86_401, -1)
        ]
        bulk = await client.post(
            "/v1/offers/bulk", json={"offers": [offer_body, {**offer_body, FIELD: 59}]}
        )
        listed = (await client.get("/v1/offers")).json()["items"]
    for answer in (*refused, bulk):
        assert answer.status_code == 422, answer.text
        assert answer.headers["content-type"].startswith("application/problem+json")
    assert [[e["loc"] for e in r.json()["errors"]] for r in refused] == [[["body", FIELD]]] * 3
    assert [e["loc"] for e in bulk.json()["errors"]] == [
        ["body", "offers", "1", FIELD]
    ]  # as the API writes a loc
    assert listed == []  # nothing stored, not even the bulk's good offer
