"""The aggregated settlement events (``gpux_contracts.settlement``): what they accept, how they
travel, and that a full chunk stays far below Kafka's 1 MB default."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import pytest
from pydantic import ValidationError

from gpux_contracts.events import wrap
from gpux_contracts.leases import LedgerPosted
from gpux_contracts.settlement import MAX_ITEMS, LeasesSettled, LedgerBatchPosted
from gpux_contracts.topics import BILLING_LEASES, BILLING_LEDGER

pytestmark = pytest.mark.unit

AT = datetime(2026, 11, 30, 12, tzinfo=UTC)
LONG_ID = "x" * 64  # ids longer than any gpux makes (ULIDs: 26, UUIDs: 36)


def lease_item(i: int, **changes: Any) -> dict[str, Any]:
    item: dict[str, Any] = {
        "lease_id": f"{LONG_ID}-{i}",
        "buyer_id": LONG_ID,
        "seller_id": LONG_ID,
        "currency": "USD",
        "wallet_currency": "EUR",
        "period_start": AT - timedelta(seconds=120),
        "period_end": AT,
        "amount": "123456.123456",
        "paid": "113580.633580",
        "fee": "12345.612346",
        "seller_amount": "111110.51111",
        "fx_rate": "0.92",
        "fx_rate_at": AT - timedelta(minutes=5),
        "transfer_ids": [f"charge:{LONG_ID}-{i}:{k}" for k in (99998, 99999)],
        "totals": {
            "period": 99999,
            "charged_through": AT,
            "total_charged": "99999999.123456",
            "total_paid": "99999999.123456",
            "total_fee": "9999999.912346",
            "total_seller": "89999999.21111",
        },
    }
    return item | changes


def transfer_item(i: int) -> dict[str, Any]:
    line = {"owner": LONG_ID, "currency": "USD", "amount": "-123456.123456"}
    return {
        "transfer_id": f"charge:{LONG_ID}-{i}:99999",
        "kind": "charge",
        "created_at": AT,
        "reference": "r" * 200,
        "fx_rate": "0.92",
        "fx_base": "USD",
        "fx_quote": "EUR",
        "fx_rate_at": AT,
        "lines": [line | {"kind": k} for k in ("available", "held", "seller_payable")],
    }


def test_the_events_travel_on_the_lease_and_ledger_topics() -> None:
    assert LeasesSettled in BILLING_LEASES.payloads
    assert LedgerBatchPosted in BILLING_LEDGER.payloads
    assert (LeasesSettled.event_type, LeasesSettled.schema_version) == ("leases.settled", 1)
    assert (LedgerBatchPosted.event_type, LedgerBatchPosted.schema_version) == (
        "ledger.batch_posted",
        1,
    )


def test_a_full_chunk_is_far_below_a_megabyte_and_reads_back_equal() -> None:
    settled = LeasesSettled.model_validate(
        {"settled_at": AT, "leases": [lease_item(i) for i in range(MAX_ITEMS)]}
    )
    posted = LedgerBatchPosted.model_validate(
        {"transfers": [transfer_item(i) for i in range(MAX_ITEMS)]}
    )
    for topic, payload in ((BILLING_LEASES, settled), (BILLING_LEDGER, posted)):
        body = wrap(payload, producer="billing", occurred_at=AT).model_dump_json().encode()
        assert len(body) < 700_000, len(body)
        assert topic.codec().decode(body).payload == payload


def test_a_ledger_item_is_a_ledger_posted() -> None:
    posted = LedgerBatchPosted.model_validate({"transfers": [transfer_item(1)]})
    assert posted.transfers[0] == LedgerPosted.model_validate(transfer_item(1))


def test_amounts_are_decimal_strings() -> None:
    settled = LeasesSettled.model_validate({"settled_at": AT, "leases": [lease_item(1)]})
    assert settled.leases[0].amount == Decimal("123456.123456")
    dumped = settled.model_dump(mode="json")["leases"][0]
    assert (dumped["amount"], dumped["totals"]["total_fee"]) == ("123456.123456", "9999999.912346")
    with pytest.raises(ValidationError):
        LeasesSettled.model_validate({"settled_at": AT, "leases": [lease_item(1, amount=0.5)]})


@pytest.mark.parametrize(
    "leases",
    [[], [lease_item(i) for i in range(MAX_ITEMS + 1)], [lease_item(1, transfer_ids=[])]],
    ids=["empty", "over the chunk size", "no transfer"],
)
def test_an_empty_oversized_or_transferless_batch_is_refused(leases: list[Any]) -> None:
    with pytest.raises(ValidationError):
        LeasesSettled.model_validate({"settled_at": AT, "leases": leases})


def test_unknown_fields_are_refused() -> None:
    with pytest.raises(ValidationError):
        LeasesSettled.model_validate({"settled_at": AT, "leases": [lease_item(1, extra=1)]})
    with pytest.raises(ValidationError):
        LedgerBatchPosted.model_validate({"transfers": [transfer_item(1)], "settled_at": AT})
