"""The lease's delivery on the memory unit of work: the lease view's provisioning life
(opened provisioning, ready running, a failed end failed), what each party hears of it, the
SSH keys an order names, and the access handoff (who may post, report and read, reports sent
once, the erasure's 410)."""

from __future__ import annotations

import base64
from datetime import datetime, timedelta
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519
from fastapi.exceptions import RequestValidationError

from gpux_contracts.accounts import Role
from gpux_contracts.events import Envelope, Payload, wrap
from gpux_contracts.leases import (
    LeaseEndReason,
    LeaseFailure,
    LeaseFailureReported,
    LeaseOpened,
    LeaseReadyReported,
)
from gpux_contracts.topics import BILLING_LEASES, Topic
from gpux_gateway.adapters.access_cipher import AesGcmAccessCipher
from gpux_gateway.adapters.memory.unit_of_work import EPOCH, MemoryGatewayUnitOfWork
from gpux_gateway.domain.handoff import access_details
from gpux_gateway.domain.ssh_keys import parse
from gpux_gateway.handoff import service as handoff
from gpux_gateway.handoff.repository import ReportKind
from gpux_gateway.leases import service as leases
from gpux_gateway.leases.repository import LeaseFilter
from gpux_gateway.notifications.types import AccountEventType
from gpux_gateway.orders import service as orders
from gpux_gateway.orders.schemas import OrderIn
from gpux_gateway.service import HANDLERS_BY_TOPIC
from gpux_gateway.ssh_keys import service as ssh_keys
from gpux_platform.batches import BatchHandler
from gpux_platform.clock import ManualClock
from gpux_platform.problems import ProblemError

from ..lease_events import lease_ended, lease_failed, lease_opened, lease_ready, lease_totals
from .test_gateway_trading_services import once, orders_placed
from .units import with_accounts

pytestmark = pytest.mark.unit

BUYER, SELLER, STRANGER = "buyer-1", "seller-1", "stranger-1"
T = AccountEventType
CIPHER = AesGcmAccessCipher.from_setting("k1:" + base64.b64encode(b"\x07" * 32).decode())
DEADLINE = EPOCH + timedelta(minutes=10)
SSH = access_details(host="gpu-7.example.com", port=2222, user="ubuntu", notes="key-only")
ORDER: dict[str, Any] = {
    "gpu": "rtx-4090",
    "gpus": 1,
    "type": "limit",
    "max_price_per_gpu_hour": "1.00",
    "currency": "USD",
    "rebuy_on_interruption": True,
    "tier": "interruptible",
}


@pytest.fixture
def uow() -> MemoryGatewayUnitOfWork:
    return with_accounts({BUYER: Role.BUYER, SELLER: Role.SELLER, STRANGER: Role.SELLER})


def event(payload: Payload) -> Envelope[Any]:
    return wrap(payload, producer="billing", occurred_at=EPOCH)


async def apply(
    uow: MemoryGatewayUnitOfWork, topic: Topic, *events: Payload | Envelope[Any]
) -> None:
    """Hand the events (payloads are wrapped in new envelopes) to the topic's handlers."""
    batch = [e if isinstance(e, Envelope) else event(e) for e in events]
    outcome = await BatchHandler(topic, HANDLERS_BY_TOPIC[topic], lambda: uow).apply(batch)
    assert outcome.errors == []


async def register_key(uow: MemoryGatewayUnitOfWork, name: str) -> str:
    line = (
        ed25519.Ed25519PrivateKey.generate()
        .public_key()
        .public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH)
    )
    async with uow:
        made = await ssh_keys.register(uow, BUYER, name=name, key=parse(line.decode()))
        await uow.commit()
    return made.id


async def place(uow: MemoryGatewayUnitOfWork, **changes: Any) -> dict[str, Any]:
    body = OrderIn.model_validate({**ORDER, **changes})
    async with uow:
        made = await orders.place(uow, buyer_id=BUYER, order=body, once=once(BUYER))
        await uow.commit()
    return made.body


def provisioning(order_id: str = "o1", **fields: Any) -> LeaseOpened:
    values: dict[str, Any] = {"order_id": order_id, "provisioning_deadline": DEADLINE}
    return lease_opened(BUYER, SELLER, started_at=EPOCH, **(values | fields))


def failed(lease: LeaseOpened, detail: str = "") -> Payload:
    ended_at = EPOCH + timedelta(minutes=3)
    return lease_failed(lease, LeaseFailure.SELLER_REPORTED, ended_at=ended_at, detail=detail)


async def shown(uow: MemoryGatewayUnitOfWork, lease: LeaseOpened) -> dict[str, Any]:
    async with uow:
        return (await leases.get(uow, BUYER, lease.lease_id)).model_dump(mode="json")


def heard(uow: MemoryGatewayUnitOfWork) -> list[tuple[str, AccountEventType]]:
    return [
        (e.account_id, e.type)
        for e in uow.state.account_events.values()
        if e.type in (T.LEASE_PROVISIONING, T.LEASE_READY, T.LEASE_FAILED)
    ]


def reports(uow: MemoryGatewayUnitOfWork) -> list[Payload]:
    return [
        m.envelope.payload
        for m in uow.published
        if isinstance(m.envelope.payload, LeaseReadyReported | LeaseFailureReported)
    ]


# The lease view's life.


async def test_a_lease_with_a_deadline_provisions_then_runs_from_ready_at(
    uow: MemoryGatewayUnitOfWork,
) -> None:
    lease = provisioning(hours=3)
    await apply(uow, BILLING_LEASES, lease)
    before = await shown(uow, lease)
    assert (before["status"], before["provisioning_deadline"], before["ready_at"]) == (
        "provisioning",
        "2026-01-01T00:10:00Z",
        None,
    )
    at = EPOCH + timedelta(minutes=4)
    await apply(
        uow, BILLING_LEASES, lease_ready(lease, at), lease_ready(lease, at + timedelta(minutes=1))
    )
    after = await shown(uow, lease)
    assert (after["status"], after["ready_at"], after["ends_at"]) == (
        "running",
        "2026-01-01T00:04:00Z",
        "2026-01-01T03:04:00Z",  # three hours from ready_at, as billing charges it
    )
    assert before["ends_at"] == "2026-01-01T03:00:00Z"


async def test_a_lease_without_a_deadline_runs_from_its_start(
    uow: MemoryGatewayUnitOfWork,
) -> None:
    lease = provisioning(provisioning_deadline=None)
    await apply(uow, BILLING_LEASES, lease)
    assert (await shown(uow, lease))["status"] == "running"
    assert heard(uow) == []


async def test_a_ready_read_before_the_opening_leaves_the_lease_running(
    uow: MemoryGatewayUnitOfWork,
) -> None:
    lease = provisioning()
    await apply(uow, BILLING_LEASES, lease_ready(lease, EPOCH + timedelta(minutes=1)), lease)
    assert (await shown(uow, lease))["status"] == "running"


async def test_a_failed_end_fails_the_lease_for_good_with_its_failure(
    uow: MemoryGatewayUnitOfWork,
) -> None:
    lease = provisioning()
    await apply(uow, BILLING_LEASES, lease, failed(lease, "no GPUs"), lease_ready(lease, DEADLINE))
    view = await shown(uow, lease)
    assert (view["status"], view["end_reason"], view["failure"], view["failure_detail"]) == (
        "failed",
        "failed",
        "seller_reported",
        "no GPUs",
    )
    async with uow:
        with pytest.raises(ProblemError) as refused:
            await leases.stop(uow, buyer_id=BUYER, lease_id=lease.lease_id, once=once(BUYER))
    assert refused.value.status == 409


async def test_listing_by_status_finds_provisioning_and_failed_leases(
    uow: MemoryGatewayUnitOfWork,
) -> None:
    waiting, broken = provisioning(), provisioning()
    await apply(uow, BILLING_LEASES, waiting, broken, failed(broken))
    async with uow:
        for status, lease in (("provisioning", waiting), ("failed", broken)):
            page = await leases.page(uow, LeaseFilter(BUYER, status=status), limit=10, cursor=None)
            assert [i.lease_id for i in page.items] == [lease.lease_id]


# What the parties hear.


async def test_the_seller_hears_of_a_provisioning_lease_with_the_orders_keys(
    uow: MemoryGatewayUnitOfWork,
) -> None:
    laptop = await register_key(uow, "laptop")
    await register_key(uow, "ci")
    order = await place(uow, ssh_key_ids=[laptop])
    lease = provisioning(order["id"], gpus=2)
    opened = event(lease)
    await apply(uow, BILLING_LEASES, opened)
    await apply(uow, BILLING_LEASES, opened)  # redelivered: heard once
    assert heard(uow) == [(SELLER, T.LEASE_PROVISIONING)]
    (told,) = [e for e in uow.state.account_events.values() if e.type is T.LEASE_PROVISIONING]
    key = uow.state.ssh_keys[laptop]
    assert told.data == {
        "lease_id": lease.lease_id,
        "order_id": order["id"],
        "offer_id": lease.offer_id,
        "buyer_id": BUYER,
        "seller_id": SELLER,
        "gpu": lease.gpu,
        "gpus": 2,
        "tier": "on_demand",
        "started_at": "2026-01-01T00:00:00Z",
        "provisioning_deadline": "2026-01-01T00:10:00Z",
        "ssh_keys": [
            {
                "id": laptop,
                "type": "ed25519",
                "public_key": key.public_key,
                "fingerprint": key.fingerprint,
            }
        ],
    }


async def test_an_order_naming_no_keys_hands_over_all_the_buyers_keys(
    uow: MemoryGatewayUnitOfWork,
) -> None:
    ids = sorted([await register_key(uow, "a"), await register_key(uow, "b")])
    order = await place(uow)
    await apply(uow, BILLING_LEASES, provisioning(order["id"]))
    (told,) = [e for e in uow.state.account_events.values() if e.type is T.LEASE_PROVISIONING]
    assert [k["id"] for k in told.data["ssh_keys"]] == ids


async def test_both_parties_hear_ready_and_failed(uow: MemoryGatewayUnitOfWork) -> None:
    good, bad = provisioning(), provisioning()
    await apply(uow, BILLING_LEASES, good, bad)
    await apply(uow, BILLING_LEASES, lease_ready(good, DEADLINE), failed(bad, "broken"))
    assert heard(uow) == [
        (SELLER, T.LEASE_PROVISIONING),
        (SELLER, T.LEASE_PROVISIONING),
        (BUYER, T.LEASE_READY),
        (SELLER, T.LEASE_READY),
        (BUYER, T.LEASE_FAILED),
        (SELLER, T.LEASE_FAILED),
    ]
    failure = next(e for e in uow.state.account_events.values() if e.type is T.LEASE_FAILED)
    assert (failure.data["lease_id"], failure.data["failure"], failure.data["detail"]) == (
        bad.lease_id,
        "seller_reported",
        "broken",
    )


# SSH keys per order.


async def test_an_order_keeps_its_named_keys_once_each_and_shows_them(
    uow: MemoryGatewayUnitOfWork,
) -> None:
    first, second = await register_key(uow, "a"), await register_key(uow, "b")
    order = await place(uow, ssh_key_ids=[second, first, second])
    assert order["ssh_key_ids"] == [second, first]
    async with uow:
        detail = await orders.get(uow, BUYER, order["id"])
    assert detail.ssh_key_ids == [second, first]


async def test_an_order_naming_a_key_not_on_the_account_is_refused_per_key(
    uow: MemoryGatewayUnitOfWork,
) -> None:
    mine = await register_key(uow, "mine")
    body = OrderIn.model_validate({**ORDER, "ssh_key_ids": [mine, "nope", "other"]})
    async with uow:
        with pytest.raises(RequestValidationError) as refused:
            await orders.place(uow, buyer_id=BUYER, order=body, once=once(BUYER))
    assert [e["loc"] for e in refused.value.errors()] == [
        ("body", "ssh_key_ids", 1),
        ("body", "ssh_key_ids", 2),
    ]
    assert not uow.state.orders


def test_an_order_names_at_most_ten_keys() -> None:
    with pytest.raises(ValueError, match="at most 10"):
        OrderIn.model_validate({**ORDER, "ssh_key_ids": [f"k{i}" for i in range(11)]})


async def test_a_rebuy_keeps_the_orders_keys(uow: MemoryGatewayUnitOfWork) -> None:
    key = await register_key(uow, "a")
    order = await place(uow, ssh_key_ids=[key])
    lease = lease_opened(
        BUYER, SELLER, started_at=EPOCH, order_id=order["id"], tier="interruptible"
    )
    totals = lease_totals(1, charged_through=EPOCH + timedelta(hours=1), charged=1, fee="0.1")
    await apply(
        uow, BILLING_LEASES, lease, lease_ended(lease, totals, reason=LeaseEndReason.INTERRUPTED)
    )
    (again,) = [c for c in orders_placed(uow) if c.rebuy_of]
    assert list(uow.state.orders[again.order_id].ssh_key_ids) == [key]


# The access handoff.


async def post(
    uow: MemoryGatewayUnitOfWork, lease: LeaseOpened, seller: str = SELLER
) -> dict[str, Any]:
    async with uow:
        posted = await handoff.post_access(
            uow, CIPHER, seller_id=seller, lease_id=lease.lease_id, details=SSH
        )
        await uow.commit()
    return posted.model_dump(mode="json")


async def read(uow: MemoryGatewayUnitOfWork, lease: LeaseOpened, buyer: str = BUYER) -> Any:
    async with uow:
        return await handoff.get_access(uow, CIPHER, buyer_id=buyer, lease_id=lease.lease_id)


async def test_the_seller_posts_access_once_reported_and_the_buyer_reads_it(
    uow: MemoryGatewayUnitOfWork,
) -> None:
    lease = provisioning()
    await apply(uow, BILLING_LEASES, lease)
    first = await post(uow, lease)
    assert (first["ready_reported"], first["lease_status"]) == (True, "provisioning")
    second = await post(uow, lease)  # the view still shows it provisioning
    assert second["ready_reported"] is False
    (report,) = reports(uow)
    assert report == LeaseReadyReported(
        lease_id=lease.lease_id, buyer_id=BUYER, seller_id=SELLER, reported_at=EPOCH
    )
    (message,) = [m for m in uow.published if m.envelope.payload is report]
    assert (message.topic.name, message.key) == ("billing.commands", BUYER)
    assert message.envelope.event_id == handoff.report_id(lease.lease_id, ReportKind.READY)
    got = await read(uow, lease)
    assert (got.host, got.port, got.user, got.endpoint_url, got.notes) == (
        "gpu-7.example.com",
        2222,
        "ubuntu",
        None,
        "key-only",
    )
    stored = uow.state.lease_access[lease.lease_id]
    assert stored.sealed is not None
    assert b"gpu-7" not in stored.sealed.ciphertext


async def test_posting_for_a_running_lease_sends_no_report(uow: MemoryGatewayUnitOfWork) -> None:
    lease = provisioning()
    await apply(uow, BILLING_LEASES, lease, lease_ready(lease, EPOCH))
    assert (await post(uow, lease))["ready_reported"] is False
    assert reports(uow) == []


async def test_only_the_leases_seller_posts_and_only_its_buyer_reads(
    uow: MemoryGatewayUnitOfWork,
) -> None:
    lease = provisioning()
    await apply(uow, BILLING_LEASES, lease)
    for someone in (BUYER, STRANGER):
        with pytest.raises(ProblemError) as refused:
            await post(uow, lease, seller=someone)
        assert (refused.value.status, refused.value.slug) == (404, "not-found")
    await post(uow, lease)
    for someone in (SELLER, STRANGER):
        with pytest.raises(ProblemError) as refused:
            await read(uow, lease, buyer=someone)
        assert (refused.value.status, refused.value.slug) == (404, "not-found")
    assert len(reports(uow)) == 1


async def test_the_buyer_reads_no_access_before_the_seller_posts(
    uow: MemoryGatewayUnitOfWork,
) -> None:
    lease = provisioning()
    await apply(uow, BILLING_LEASES, lease)
    with pytest.raises(ProblemError) as refused:
        await read(uow, lease)
    assert (refused.value.status, refused.value.slug) == (404, "no-access")


async def test_access_for_a_failed_or_ended_lease_is_refused(
    uow: MemoryGatewayUnitOfWork,
) -> None:
    lease = provisioning()
    await apply(uow, BILLING_LEASES, lease, failed(lease))
    with pytest.raises(ProblemError) as refused:
        await post(uow, lease)
    assert (refused.value.status, refused.value.slug) == (409, "lease-failed")
    assert lease.lease_id not in uow.state.lease_access


async def test_a_failure_is_reported_once_while_provisioning_only(
    uow: MemoryGatewayUnitOfWork,
) -> None:
    lease, running = provisioning(), provisioning(provisioning_deadline=None)
    await apply(uow, BILLING_LEASES, lease, running)

    async def report(which: LeaseOpened, seller: str = SELLER) -> Any:
        async with uow:
            done = await handoff.report_failure(
                uow, seller_id=seller, lease_id=which.lease_id, detail="PSU died"
            )
            await uow.commit()
        return done

    with pytest.raises(ProblemError) as stranger:
        await report(lease, STRANGER)
    assert stranger.value.status == 404
    await report(lease)
    await report(lease)
    (sent,) = reports(uow)
    assert isinstance(sent, LeaseFailureReported)
    assert (sent.lease_id, sent.detail, sent.reported_at) == (lease.lease_id, "PSU died", EPOCH)
    with pytest.raises(ProblemError) as not_provisioning:
        await report(running)
    assert (not_provisioning.value.status, not_provisioning.value.slug) == (
        409,
        "lease-not-provisioning",
    )


async def test_details_are_erased_a_retention_after_the_end_then_answer_410(
    uow: MemoryGatewayUnitOfWork,
) -> None:
    lease, still = provisioning(), provisioning()
    await apply(uow, BILLING_LEASES, lease, still)
    await post(uow, lease)
    await post(uow, still)
    ended_at = EPOCH + timedelta(minutes=3)
    await apply(uow, BILLING_LEASES, failed(lease))

    async def erase(at: datetime) -> int:
        uow.clock = ManualClock(at)
        async with uow:
            erased = await handoff.erase_expired(uow, 3600)
            await uow.commit()
        return erased

    assert await erase(ended_at + timedelta(minutes=59)) == 0
    assert (await read(uow, lease)).host == "gpu-7.example.com"
    assert await erase(ended_at + timedelta(minutes=61)) == 1
    assert await erase(ended_at + timedelta(minutes=62)) == 0  # erased once
    with pytest.raises(ProblemError) as gone:
        await read(uow, lease)
    assert (gone.value.status, gone.value.slug) == (410, "access-erased")
    assert (await read(uow, still)).host == "gpu-7.example.com"
    assert uow.state.lease_access[lease.lease_id].sealed is None


async def test_unreadable_details_are_a_problem_naming_nothing_of_them(
    uow: MemoryGatewayUnitOfWork,
) -> None:
    lease = provisioning()
    await apply(uow, BILLING_LEASES, lease)
    await post(uow, lease)
    other = AesGcmAccessCipher.from_setting("k1:" + base64.b64encode(b"\x08" * 32).decode())
    async with uow:
        with pytest.raises(ProblemError) as refused:
            await handoff.get_access(uow, other, buyer_id=BUYER, lease_id=lease.lease_id)
    assert refused.value.status == 500
    assert "gpu-7" not in str(refused.value.detail)
