"""Capacity through the API, against the real infrastructure: offers with two prices and the
pool the book reports, an interrupted lease as its buyer's machine and its seller see it, the
seller's reclaim on capacity.commands, and the re-buy of an interrupted lease, placed once."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from gpux_contracts.events import Envelope, Payload, wrap
from gpux_contracts.leases import LeaseEndReason
from gpux_contracts.offers import OfferStatus
from gpux_contracts.topics import (
    BILLING_LEASES,
    CAPACITY_COMMANDS,
    OFFERS_COMMANDS,
    OFFERS_STATUS,
    ORDERS_COMMANDS,
)
from gpux_devinfra.testing.http import get_until
from gpux_devinfra.testing.payloads import offer_status
from gpux_gateway.domain.rebuy import rebuy_order_id
from gpux_platform.broker import Outgoing

from ..lease_events import hourly_totals, lease_ended, lease_noticed, lease_opened
from .conftest import ORDER, Parties, commands_about, publish_as


async def _publish(gateway: Any, *messages: Outgoing) -> None:
    await publish_as(gateway, "billing", list(messages))


def _lease_event(payload: Payload) -> Outgoing:
    envelope: Envelope[Any] = wrap(payload, producer="billing", occurred_at=datetime.now(UTC))
    lease_id = getattr(payload, "lease_id")  # noqa: B009 - every lease event has one
    return Outgoing(BILLING_LEASES, lease_id, envelope)


SPOT = {"interruptible_price_per_gpu_hour": "0.2000", "interruption_notice_seconds": 300}


async def test_an_offer_with_two_prices_shows_the_pool_the_book_reports(
    gateway: Any, sign_up: Any, offer_body: dict[str, Any]
) -> None:
    seller = await sign_up(["seller"])
    async with gateway.client(seller["key"]) as client:
        made = await client.post("/v1/offers", json={**offer_body, **SPOT})
        assert made.status_code == 202, made.text
        offer = made.json()
        single = {**offer_body, **SPOT, "tier": "interruptible"}
        refused = await client.post("/v1/offers", json=single)
        short = await client.post(
            "/v1/offers", json={**offer_body, "interruption_notice_seconds": 60}
        )
    assert {k: offer[k] for k in ("interruptible_price_per_gpu_hour", "capacity_gpus")} == {
        "interruptible_price_per_gpu_hour": "0.20",
        "capacity_gpus": 4,
    }
    assert (offer["interruption_notice_seconds"], offer["leased_gpus"]) == (300, 0)
    assert refused.status_code == 422
    assert refused.headers["content-type"].startswith("application/problem+json")
    assert [e["loc"] for e in refused.json()["errors"]] == [
        ["body", "interruptible_price_per_gpu_hour"]
    ]
    assert short.status_code == 422
    assert [e["loc"] for e in short.json()["errors"]] == [["body", "interruption_notice_seconds"]]
    (sent,) = await commands_about(gateway, OFFERS_COMMANDS, "offer_id", offer["id"], 1.0)
    assert sent["payload"]["interruptible_price_per_gpu_hour"] == "0.2000"
    assert sent["payload"]["interruption_notice_seconds"] == 300

    def status(state: OfferStatus, free: int, leased: int) -> Outgoing:
        report = offer_status(
            offer["id"], state, free, seller_id=seller["id"], capacity_gpus=4, leased_gpus=leased
        )
        return Outgoing(
            OFFERS_STATUS,
            report.gpu,
            wrap(report, producer="matching", occurred_at=datetime.now(UTC)),
        )

    await _publish(gateway, status(OfferStatus.EXHAUSTED, 0, 4))
    path = f"/v1/offers/{offer['id']}"
    async with gateway.client(seller["key"]) as client:
        full = await get_until(client, path, lambda o: o["status"] == "exhausted")
        await _publish(gateway, status(OfferStatus.LIVE, 3, 1))
        back = await get_until(client, path, lambda o: o["status"] == "live")
        change = {"interruptible_price_per_gpu_hour": "0.1500"}
        patched = await client.patch(path, json=change)  # an offer on the book: changeable
    assert (full["capacity_gpus"], full["leased_gpus"], full["remaining_gpus"]) == (4, 4, 0)
    assert (back["capacity_gpus"], back["leased_gpus"], back["remaining_gpus"]) == (4, 1, 3)
    assert patched.status_code == 202, patched.text


async def test_the_machine_sees_the_interruption_and_only_the_parties_see_the_lease(
    gateway: Any, parties: Parties
) -> None:
    buyer, seller, other = parties
    start = datetime.now(UTC) - timedelta(minutes=5)
    lease = lease_opened(buyer["id"], seller["id"], started_at=start, tier="interruptible")
    await _publish(gateway, _lease_event(lease))
    path = f"/v1/leases/{lease.lease_id}"
    async with gateway.client(buyer["key"]) as client:
        await get_until(client, path, lambda b: b.get("status") == "running")
        quiet = await client.get(f"{path}/interruption")
        missing = await client.get("/v1/leases/no-such-lease/interruption")
    async with gateway.client(other["key"]) as client:
        theirs = await client.get(f"{path}/interruption")
    assert (quiet.status_code, quiet.json()["type"]) == (
        404,
        "https://gpux.dev/problems/no-interruption",
    )
    assert quiet.headers["content-type"].startswith("application/problem+json")
    for refused in (missing, theirs):
        assert (refused.status_code, refused.json()["type"]) == (
            404,
            "https://gpux.dev/problems/not-found",
        )
    notice = lease_noticed(lease, noticed_at=datetime.now(UTC), notice=timedelta(seconds=120))
    await _publish(gateway, _lease_event(notice))
    async with gateway.client(buyer["key"]) as client:
        shown = await get_until(client, path, lambda b: b.get("status") == "interrupting")
        answer = await client.get(f"{path}/interruption")
        listed = await client.get("/v1/leases?status=interrupting")
    async with gateway.client(seller["key"]) as client:
        sold = await client.get(path)
    iso = notice.interrupt_at.isoformat().replace("+00:00", "Z")
    assert (shown["interrupt_at"], shown["interruption_cause"]) == (iso, "preempted")
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert {k: body[k] for k in ("lease_id", "action", "cause", "interrupt_at")} == {
        "lease_id": lease.lease_id,
        "action": "terminate",
        "cause": "preempted",
        "interrupt_at": iso,
    }
    assert 0 <= body["seconds_left"] <= 120
    assert [i["lease_id"] for i in listed.json()["items"]] == [lease.lease_id]
    assert sold.json()["status"] == "interrupting"


async def test_the_seller_reclaims_an_interruptible_lease_once_per_key(
    gateway: Any, sign_up: Any
) -> None:
    buyer, seller, rival = (
        await sign_up(["buyer"]),
        await sign_up(["seller"]),
        await sign_up(["seller"]),
    )
    start = datetime.now(UTC) - timedelta(minutes=5)
    spot = lease_opened(buyer["id"], seller["id"], started_at=start, tier="interruptible")
    steady = lease_opened(buyer["id"], seller["id"], started_at=start)
    await _publish(gateway, _lease_event(spot), _lease_event(steady))
    reclaim = f"/v1/leases/{spot.lease_id}/reclaim"
    key = {"Idempotency-Key": f"reclaim-{spot.lease_id}"}
    async with gateway.client(seller["key"]) as client:
        await get_until(client, "/v1/leases", lambda b: len(b["items"]) == 2)
        first = await client.post(reclaim, headers=key)
        again = await client.post(reclaim, headers=key)
        on_demand = await client.post(f"/v1/leases/{steady.lease_id}/reclaim")
    async with gateway.client(rival["key"]) as client:
        not_theirs = await client.post(reclaim)
    async with gateway.client(buyer["key"]) as client:
        no_role = await client.post(reclaim)
    assert first.status_code == 202, first.text
    assert (first.json()["lease_id"], first.json()["tier"]) == (spot.lease_id, "interruptible")
    assert (again.status_code, again.json()) == (202, first.json())
    assert again.headers["idempotent-replayed"] == "true"
    assert (on_demand.status_code, on_demand.json()["type"]) == (
        409,
        "https://gpux.dev/problems/lease-not-interruptible",
    )
    assert not_theirs.status_code == 404
    assert (no_role.status_code, no_role.json()["type"]) == (
        403,
        "https://gpux.dev/problems/role-required",
    )
    sent = await commands_about(gateway, CAPACITY_COMMANDS, "lease_id", spot.lease_id, 1.0)
    assert [c["event_type"] for c in sent] == ["lease.reclaim_requested"]
    assert {k: sent[0]["payload"][k] for k in ("buyer_id", "seller_id", "offer_id", "gpu")} == {
        "buyer_id": buyer["id"],
        "seller_id": seller["id"],
        "offer_id": spot.offer_id,
        "gpu": spot.gpu,
    }


async def test_an_interrupted_lease_of_a_rebuying_order_is_bought_again_once(
    gateway: Any, sign_up: Any
) -> None:
    buyer, seller = await sign_up(["buyer"]), await sign_up(["seller"])
    body = {**ORDER, "tier": "interruptible", "rebuy_on_interruption": True}
    async with gateway.client(buyer["key"]) as client:
        placed = await client.post("/v1/orders", json=body)
    assert placed.status_code == 202, placed.text
    order = placed.json()
    assert (order["rebuy_on_interruption"], order["rebuy_of"]) == (True, None)
    start = datetime.now(UTC) - timedelta(minutes=5)
    lease = lease_opened(
        buyer["id"], seller["id"], started_at=start, tier="interruptible", gpus=3,
        order_id=order["id"], lease_id=f"{order['id']}:b1",
    )  # fmt: skip
    ended = lease_ended(lease, hourly_totals(start, 1), reason=LeaseEndReason.INTERRUPTED)
    # The end twice under two event ids (as a replay would): one re-buy.
    await _publish(gateway, _lease_event(lease), _lease_event(ended), _lease_event(ended))
    again_id = rebuy_order_id(lease.lease_id)
    async with gateway.client(buyer["key"]) as client:
        again = await get_until(client, f"/v1/orders/{again_id}", lambda b: "id" in b)
        listing = (await client.get("/v1/orders")).json()
    assert (again["rebuy_of"], again["rebuy_on_interruption"], again["gpus"]) == (
        lease.lease_id,
        True,
        3,
    )
    same = ("type", "max_price_per_gpu_hour", "currency", "tier", "region", "hours")
    assert {k: again[k] for k in same} == {k: order[k] for k in same}
    assert sorted(o["id"] for o in listing["items"]) == sorted([order["id"], again_id])
    sent = await commands_about(gateway, ORDERS_COMMANDS, "order_id", again_id, 2.0)
    assert [c["event_type"] for c in sent] == ["order.placed"]
    payload = sent[0]["payload"]
    assert (payload["rebuy_of"], payload["gpus"], payload["buyer_id"]) == (
        lease.lease_id,
        3,
        buyer["id"],
    )
