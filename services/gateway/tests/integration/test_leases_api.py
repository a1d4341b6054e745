"""Leases, statements and earnings: billing's events on the real topics, read through the API."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import asyncpg

from gpux_contracts.events import Envelope, Payload, wrap
from gpux_contracts.ids import new_id
from gpux_contracts.leases import (
    LeaseCharged,
    LeaseEnded,
    LeaseOpened,
    LeaseTotals,
    LedgerLine,
    LedgerPosted,
)
from gpux_contracts.money import Currency, accrued_micros
from gpux_contracts.offers import BillingGranularity
from gpux_contracts.settlement import LeasesSettled, LedgerBatchPosted
from gpux_contracts.topics import BILLING_COMMANDS, BILLING_LEASES, BILLING_LEDGER
from gpux_devinfra.testing.http import get_until
from gpux_devinfra.testing.kafka import published
from gpux_platform.broker import Outgoing

from ..lease_events import (
    lease_charged,
    lease_charges,
    lease_ended,
    lease_low_balance,
    lease_opened,
    lease_totals,
    leases_settled,
)
from .conftest import Parties, publish_as

EUR, USD = Currency.EUR, Currency.USD
HOUR, SECOND = BillingGranularity.HOUR, BillingGranularity.SECOND


def _envelope(payload: Payload) -> Envelope[Any]:
    return wrap(payload, producer="billing", occurred_at=datetime.now(UTC))


async def _publish(gateway: Any, *envelopes: Envelope[Any]) -> None:
    """Publish envelopes as billing would, in order (lease events keyed by lease id, an
    aggregated one by its first lease's or transfer's)."""
    messages = []
    for env in envelopes:
        payload = env.payload
        if isinstance(payload, LedgerPosted):
            messages.append(Outgoing(BILLING_LEDGER, payload.transfer_id, env))
        elif isinstance(payload, LedgerBatchPosted):
            messages.append(Outgoing(BILLING_LEDGER, payload.transfers[0].transfer_id, env))
        elif isinstance(payload, LeasesSettled):
            messages.append(Outgoing(BILLING_LEASES, payload.leases[0].lease_id, env))
        else:
            messages.append(Outgoing(BILLING_LEASES, payload.lease_id, env))
    await publish_as(gateway, "billing", messages)


def _opened(buyer: str, seller: str, *, started_at: datetime, **fields: Any) -> LeaseOpened:
    """Two GPUs at 0.50 USD an hour, billed by the second, unless ``fields`` say otherwise."""
    values: dict[str, Any] = {"gpus": 2, "price_per_gpu_hour": Decimal("0.5000"), "billing": SECOND}
    return lease_opened(buyer, seller, started_at=started_at, **(values | fields))


def _totals(lease: LeaseOpened, period: int, charged: str, fee: str) -> LeaseTotals:
    return lease_totals(
        period,
        charged_through=lease.started_at + timedelta(minutes=10 * period),
        charged=charged,
        fee=fee,
        paid=Decimal(charged) * 2,  # an invented rate, so paid is told apart
    )


def _charged(lease: LeaseOpened, period: int, charged: str, fee: str) -> LeaseCharged:
    return lease_charged(lease, _totals(lease, period, charged, fee))


def _ended(
    lease: LeaseOpened, period: int, charged: str, fee: str, unpaid: str = "0"
) -> LeaseEnded:
    return lease_ended(lease, _totals(lease, period, charged, fee), unpaid=Decimal(unpaid))


def _shown_running(lease: LeaseOpened, buyer_id: str, seller_id: str) -> dict[str, Any]:
    """What the API shows of the lease after its first charge (its cost aside)."""
    return {
        "lease_id": lease.lease_id,
        "order_id": lease.order_id,
        "offer_id": lease.offer_id,
        "gpu": "rtx-4090",
        "tier": "on_demand",
        "gpus": 2,
        "buyer_id": buyer_id,
        "seller_id": seller_id,
        "price_per_gpu_hour": "0.50",
        "currency": "USD",
        "wallet_currency": "EUR",
        "billing": "second",
        "hours": None,
        "started_at": lease.started_at.isoformat().replace("+00:00", "Z"),
        "ends_at": None,
        "status": "running",
        "end_reason": None,
        "ended_at": None,
        "charged_through": (lease.started_at + timedelta(minutes=10))
        .isoformat()
        .replace("+00:00", "Z"),
        "total_charged": "0.50",
        "total_paid": "1.00",
        "total_fee": "0.05",
        "total_seller": "0.45",
        "unpaid": "0.00",
        "low_balance_at": None,
        "interrupt_at": None,
        "interruption_cause": None,
        "interruption_noticed_at": None,
        "provisioning_deadline": None,
        "ready_at": None,
        "failure": None,
        "failure_detail": "",
    }


async def test_a_lease_shows_to_its_buyer_and_seller_with_its_cost_so_far(
    gateway: Any, parties: Parties
) -> None:
    buyer, seller, other = parties
    lease = _opened(buyer["id"], seller["id"], started_at=datetime.now(UTC) - timedelta(hours=1))
    await _publish(gateway, _envelope(lease), _envelope(_charged(lease, 1, "0.5", "0.05")))
    path = f"/v1/leases/{lease.lease_id}"
    async with gateway.client(buyer["key"]) as client:
        before = datetime.now(UTC)
        seen = await get_until(client, path, lambda b: b.get("total_charged") == "0.50")
        after = datetime.now(UTC)
        listing = (await client.get("/v1/leases")).json()
        running = (await client.get("/v1/leases?status=running&role=buyer")).json()
        ended = (await client.get("/v1/leases?status=ended")).json()
        as_seller = await client.get("/v1/leases?role=seller")
    assert {k: v for k, v in seen.items() if k != "cost_so_far"} == _shown_running(
        lease, buyer["id"], seller["id"]
    )
    # 2 GPUs at 0.50 accrue 1.00 an hour, per whole second since the start.
    low = accrued_micros(1_000_000, (before - lease.started_at) // timedelta(seconds=1))
    high = accrued_micros(1_000_000, (after - lease.started_at) // timedelta(seconds=1))
    assert low <= Decimal(seen["cost_so_far"]) * 1_000_000 <= high
    assert [item["lease_id"] for item in listing["items"]] == [lease.lease_id]
    assert listing["next_cursor"] is None
    assert [item["lease_id"] for item in running["items"]] == [lease.lease_id]
    assert ended["items"] == []
    assert as_seller.status_code == 403  # a buyer-only account has no seller side
    async with gateway.client(seller["key"]) as client:
        theirs = (await client.get(path)).json()
        sold = (await client.get("/v1/leases?role=seller")).json()
    assert (theirs["buyer_id"], theirs["seller_id"]) == (buyer["id"], seller["id"])
    assert [item["lease_id"] for item in sold["items"]] == [lease.lease_id]
    async with gateway.client(other["key"]) as client:
        assert (await client.get(path)).status_code == 404
        assert (await client.get("/v1/leases")).json()["items"] == []


async def test_out_of_order_and_replayed_events_keep_the_latest_totals_and_the_end(
    gateway: Any, sign_up: Any
) -> None:
    buyer, seller = await sign_up(["buyer"]), await sign_up(["seller"])
    start = datetime.now(UTC) - timedelta(hours=3)
    lease = _opened(buyer["id"], seller["id"], started_at=start, billing=HOUR)
    charged_2 = _envelope(_charged(lease, 2, "2.0", "0.2"))
    low = datetime.now(UTC) - timedelta(minutes=5)
    # As a replay from another source could deliver them: the end first, the opening late,
    # older charges and a stale end after the end, and the same event twice.
    await _publish(
        gateway,
        _envelope(lease_low_balance(lease, low)),
        _envelope(_ended(lease, 3, "3.0", "0.3", unpaid="0.25")),
        charged_2,
        charged_2,
        _envelope(_charged(lease, 1, "1.0", "0.1")),
        _envelope(_ended(lease, 2, "2.0", "0.2", unpaid="0.99")),
        _envelope(lease),
        _envelope(_charged(lease, 2, "2.0", "0.2")),
        _envelope(lease),
        _envelope(lease_low_balance(lease, low - timedelta(minutes=1))),
    )
    path = f"/v1/leases/{lease.lease_id}"
    async with gateway.client(buyer["key"]) as client:
        seen = await get_until(client, path, lambda b: b.get("status") == "ended")
        # Every event of the lease shares one partition: once the last is in, all are.
        earliest = (low - timedelta(minutes=1)).isoformat().replace("+00:00", "Z")
        seen = await get_until(client, path, lambda b: b.get("low_balance_at") == earliest)
    assert seen["status"] == "ended"
    assert (seen["end_reason"], seen["unpaid"]) == ("stopped", "0.25")
    assert seen["ended_at"] == (start + timedelta(minutes=30)).isoformat().replace("+00:00", "Z")
    assert (seen["total_charged"], seen["total_fee"], seen["total_seller"]) == (
        "3.00",
        "0.30",
        "2.70",
    )
    assert seen["total_paid"] == "6.00"
    assert seen["cost_so_far"] == "3.00"  # ended: what was charged
    assert seen["low_balance_at"] == earliest  # the earliest warning is kept
    assert (seen["gpu"], seen["billing"], seen["order_id"]) == ("rtx-4090", "hour", lease.order_id)


async def test_a_charge_read_before_its_opening_is_kept_and_the_lease_shows_once_opened(
    gateway: Any, sign_up: Any
) -> None:
    buyer, seller = await sign_up(["buyer"]), await sign_up(["seller"])
    lease = _opened(buyer["id"], seller["id"], started_at=datetime.now(UTC), billing=HOUR)
    await _publish(gateway, _envelope(_charged(lease, 1, "1.0", "0.1")))
    conn = await asyncpg.connect(gateway.settings.database_url.get_secret_value())
    try:
        for _ in range(150):
            query = "SELECT opened, period FROM gateway.leases WHERE id = $1"
            row = await conn.fetchrow(query, lease.lease_id)
            if row is not None:
                break
            await asyncio.sleep(0.2)
    finally:
        await conn.close()
    assert row is not None
    assert (row["opened"], row["period"]) == (False, 1)
    path = f"/v1/leases/{lease.lease_id}"
    async with gateway.client(buyer["key"]) as client:
        # Known only from its charge: not shown until lease.opened says what it is.
        assert (await client.get(path)).status_code == 404
        async with gateway.client(seller["key"]) as as_seller:
            assert (await as_seller.get("/v1/accounts/me/earnings")).json() == {"items": []}
        await _publish(gateway, _envelope(lease))
        seen = await get_until(client, path, lambda b: b.get("status") == "running")
    assert (seen["total_charged"], seen["cost_so_far"], seen["gpus"]) == ("1.00", "1.00", 2)


async def test_the_buyer_stops_a_lease_with_one_command_for_billing(
    gateway: Any, sign_up: Any
) -> None:
    buyer = await sign_up(["buyer"])
    seller = await sign_up(["buyer", "seller"])  # may stop leases, but not the ones it sells
    stranger = await sign_up(["buyer"])
    lease = _opened(buyer["id"], seller["id"], started_at=datetime.now(UTC))
    done = _opened(buyer["id"], seller["id"], started_at=datetime.now(UTC))
    await _publish(
        gateway, _envelope(lease), _envelope(done), _envelope(_ended(done, 1, "0.1", "0.01"))
    )
    stop = f"/v1/leases/{lease.lease_id}/stop"
    headers = {"Idempotency-Key": "stop-0001"}
    async with gateway.client(buyer["key"]) as client:
        await get_until(client, f"/v1/leases/{done.lease_id}", lambda b: b.get("status") == "ended")
        await get_until(client, f"/v1/leases/{lease.lease_id}", lambda b: "status" in b)
        first = await client.post(stop, headers=headers)
        again = await client.post(stop, headers=headers)
        closed = await client.post(f"/v1/leases/{done.lease_id}/stop")
        missing = await client.post(f"/v1/leases/{new_id()}:b1/stop")
    assert first.status_code == 202, first.text
    body = first.json()
    assert (body["lease_id"], body["status"]) == (lease.lease_id, "stop_requested")
    assert (again.status_code, again.content) == (202, first.content)
    assert again.headers["Idempotent-Replayed"] == "true"
    assert (closed.status_code, closed.json()["type"]) == (
        409,
        "https://gpux.dev/problems/lease-ended",
    )
    assert missing.status_code == 404
    async with gateway.client(seller["key"]) as client:
        refused = await client.post(stop)
    async with gateway.client(stranger["key"]) as client:
        hidden = await client.post(stop)
    assert (refused.status_code, refused.json()["type"]) == (
        403,
        "https://gpux.dev/problems/lease-buyer-only",
    )
    assert hidden.status_code == 404
    commands = await published(
        gateway.settings,
        BILLING_COMMANDS,
        lambda b: (
            b["event_type"] == "lease.stop_requested"
            and b["payload"]["lease_id"] in (lease.lease_id, done.lease_id)
        ),
    )
    assert len(commands) == 1
    assert commands[0].key == buyer["id"]
    payload = commands[0].body["payload"]
    assert payload["buyer_id"] == buyer["id"]
    assert datetime.fromisoformat(payload["requested_at"]) == datetime.fromisoformat(
        body["requested_at"]
    )


def _posted(kind: str, at: datetime, lines: list[tuple[str, Currency, str, str]]) -> LedgerPosted:
    return LedgerPosted(
        transfer_id=new_id(),
        kind=kind,
        created_at=at,
        reference=f"{kind}-ref",
        lines=[LedgerLine(owner=o, currency=c, kind=k, amount=Decimal(a)) for o, c, k, a in lines],
    )


async def test_the_statement_lists_the_accounts_lines_newest_first_once_each(
    gateway: Any, sign_up: Any
) -> None:
    buyer, seller = await sign_up(["buyer"]), await sign_up(["seller"])
    b, s = buyer["id"], seller["id"]
    t0 = datetime.now(UTC) - timedelta(hours=1)
    topup = _posted("topup", t0, [(b, EUR, "available", "50")])
    hold = _posted(
        "hold", t0 + timedelta(minutes=1), [(b, EUR, "available", "-10"), (b, EUR, "held", "10")]
    )
    fx = LedgerPosted(
        transfer_id=new_id(),
        kind="charge",
        created_at=t0 + timedelta(minutes=2),
        reference="lease",
        fx_rate=Decimal("1.0850"),
        fx_base=USD,
        fx_quote=EUR,
        fx_rate_at=t0,
        lines=[
            LedgerLine(owner=b, currency=EUR, kind="held", amount=Decimal("-1.085")),
            LedgerLine(owner=s, currency=USD, kind="seller_payable", amount=Decimal("0.9")),
        ],
    )
    # A replay: the same transfer again under a new event id adds no line.
    await _publish(gateway, *(_envelope(p) for p in (fx, topup, hold, hold, fx)))
    async with gateway.client(buyer["key"]) as client:
        page = await get_until(client, "/v1/ledger", lambda body: len(body["items"]) >= 4)
        first = (await client.get("/v1/ledger?limit=3")).json()
        rest = (await client.get(f"/v1/ledger?limit=3&cursor={first['next_cursor']}")).json()
        usd = (await client.get("/v1/ledger?currency=USD")).json()
    items = page["items"]
    # Lines of one transfer share its instant; they come back in reverse posting order.
    assert [(i["kind"], i["account_kind"], i["amount"]) for i in items] == [
        ("charge", "held", "-1.085"),
        ("hold", "held", "10.00"),
        ("hold", "available", "-10.00"),
        ("topup", "available", "50.00"),
    ]
    assert items[0] == {
        "transfer_id": fx.transfer_id,
        "kind": "charge",
        "created_at": fx.created_at.isoformat().replace("+00:00", "Z"),
        "reference": "lease",
        "account_kind": "held",
        "currency": "EUR",
        "amount": "-1.085",
        "fx_rate": "1.085",
        "fx_base": "USD",
        "fx_quote": "EUR",
        "fx_rate_at": t0.isoformat().replace("+00:00", "Z"),
    }
    assert first["items"] + rest["items"] == items
    assert rest["next_cursor"] is None
    assert usd["items"] == []
    async with gateway.client(seller["key"]) as client:
        theirs = await get_until(client, "/v1/ledger", lambda body: len(body["items"]) >= 1)
    assert [(i["transfer_id"], i["amount"], i["currency"]) for i in theirs["items"]] == [
        (fx.transfer_id, "0.90", "USD")
    ]


async def test_earnings_sum_the_sellers_leases_per_currency_to_the_unit(
    gateway: Any, sign_up: Any
) -> None:
    seller, rival = await sign_up(["seller"]), await sign_up(["seller"])
    buyer = await sign_up(["buyer"])
    now = datetime.now(UTC)
    a = _opened(buyer["id"], seller["id"], started_at=now)
    b = _opened(buyer["id"], seller["id"], started_at=now)
    c = _opened(buyer["id"], seller["id"], started_at=now, currency=EUR)
    theirs = _opened(buyer["id"], rival["id"], started_at=now)
    await _publish(
        gateway,
        *(_envelope(lease) for lease in (a, b, c, theirs)),
        _envelope(_charged(a, 1, "0.000001", "0.000000")),
        _envelope(_charged(a, 2, "1.333334", "0.133333")),
        _envelope(_ended(b, 4, "2.666667", "0.266667")),
        _envelope(_charged(c, 1, "0.70", "0.07")),
        _envelope(_charged(theirs, 1, "100", "10")),
    )
    async with gateway.client(seller["key"]) as client:
        body = await get_until(
            client,
            "/v1/accounts/me/earnings",
            lambda body: [i["gross"] for i in body["items"]] == ["0.70", "4.000001"],
        )
    assert body == {
        "items": [
            {
                "currency": "EUR",
                "gross": "0.70",
                "fee": "0.07",
                "net": "0.63",
                "leases": 1,
                "running": 1,
            },
            {
                "currency": "USD",
                "gross": "4.000001",
                "fee": "0.40",
                "net": "3.600001",
                "leases": 2,
                "running": 1,
            },
        ]
    }
    async with gateway.client(buyer["key"]) as client:
        assert (await client.get("/v1/accounts/me/earnings")).status_code == 403


async def test_the_settlement_loops_aggregated_events_show_as_its_charges_one_by_one(
    gateway: Any, sign_up: Any
) -> None:
    buyer, seller = await sign_up(["buyer"]), await sign_up(["seller"])
    b, s = buyer["id"], seller["id"]
    one = _opened(b, s, started_at=datetime.now(UTC) - timedelta(hours=1))
    other = one.model_copy(update={"lease_id": new_id()})
    charges = [_charged(one, 1, "0.5", "0.05"), _charged(one, 2, "1.0", "0.1")]
    theirs = [
        c.model_copy(update={"lease_id": other.lease_id, "transfer_id": new_id()}) for c in charges
    ]

    def posted(charged: LeaseCharged) -> LedgerPosted:
        lines = [(b, EUR, "held", f"-{charged.paid}"), (s, USD, "seller_payable", "0.9")]
        made = _posted("charge", charged.period_end, lines)
        return made.model_copy(update={"transfer_id": charged.transfer_id})

    await _publish(
        gateway,
        *(_envelope(p) for p in (one, other, *charges, *(posted(c) for c in charges))),
        _envelope(leases_settled(lease_charges(*theirs))),
        _envelope(LedgerBatchPosted(transfers=[posted(c) for c in theirs])),
    )
    async with gateway.client(buyer["key"]) as client:
        aggregated, per_lease = [
            await get_until(
                client, f"/v1/leases/{lease_id}", lambda v: v.get("total_charged") == "1.00"
            )
            for lease_id in (other.lease_id, one.lease_id)
        ]
        lines = await get_until(client, "/v1/ledger", lambda body: len(body["items"]) == 4)
    for view in (aggregated, per_lease):
        del view["cost_so_far"]  # up to the instant of each GET
    assert aggregated == per_lease | {"lease_id": other.lease_id}
    by_transfer = {line["transfer_id"]: line for line in lines["items"]}
    for charged, theirs_charged in zip(charges, theirs, strict=True):
        expected = by_transfer[charged.transfer_id] | {"transfer_id": theirs_charged.transfer_id}
        assert by_transfer[theirs_charged.transfer_id] == expected
    async with gateway.client(seller["key"]) as client:
        earned = await get_until(client, "/v1/accounts/me/earnings", lambda body: body["items"])
    assert [(i["gross"], i["net"], i["leases"]) for i in earned["items"]] == [("2.00", "1.80", 2)]
