"""The access handoff's pure rules: which details are accepted, their encoding, the keyring,
when access may be posted and reports sent; a lease's status through its delivery."""

from __future__ import annotations

import base64
from datetime import UTC, datetime, timedelta

import pytest

from gpux_contracts.leases import LeaseStatus
from gpux_gateway.domain.handoff import (
    MAX_NOTES,
    AccessDecodeError,
    AccessDetails,
    AccessDetailsError,
    AccessKeyError,
    access_details,
    access_refusal,
    decode,
    encode,
    erasable_before,
    may_report_failure,
    parse_keyring,
    reports_ready,
)
from gpux_gateway.domain.leases import (
    lease_status,
    reclaim_refusal,
    status_of,
    stored_end,
    stored_status,
)

pytestmark = pytest.mark.unit

NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)
KEY = base64.b64encode(bytes(range(32))).decode()


def test_an_ssh_login_is_accepted_with_its_host_in_lower_case() -> None:
    details = access_details(host="GPU-1.Example.com", port=2222, user="ubuntu", notes="hi")
    assert (details.host, details.port, details.user) == ("gpu-1.example.com", 2222, "ubuntu")
    assert details.endpoint_url is None
    assert details.notes == "hi"


def test_an_ip_address_is_a_host_in_its_canonical_form() -> None:
    assert access_details(host="2001:DB8::1", port=22, user="root").host == "2001:db8::1"
    assert access_details(host="203.0.113.9", port=22, user="root").host == "203.0.113.9"


def test_an_endpoint_url_is_accepted_alone() -> None:
    details = access_details(endpoint_url="https://nb.example.com:8888/lab?token=x")
    assert details.endpoint_url == "https://nb.example.com:8888/lab?token=x"
    assert details.host is None


@pytest.mark.parametrize(
    ("given", "field"),
    [
        ({}, "host"),
        ({"host": "h.example", "port": 22}, "host"),
        ({"host": "h.example", "port": 0, "user": "u"}, "port"),
        ({"host": "h.example", "port": 65536, "user": "u"}, "port"),
        ({"host": "bad host", "port": 22, "user": "u"}, "host"),
        ({"host": "-x.example", "port": 22, "user": "u"}, "host"),
        ({"host": "h.example", "port": 22, "user": "a b"}, "user"),
        (
            {"host": "h.example", "port": 22, "user": "u", "endpoint_url": "https://e"},
            "endpoint_url",
        ),
        ({"endpoint_url": "ftp://files.example"}, "endpoint_url"),
        ({"endpoint_url": "https://"}, "endpoint_url"),
        ({"endpoint_url": "https://a.example:99999/"}, "endpoint_url"),
        ({"endpoint_url": "https://a.example/ x"}, "endpoint_url"),
        ({"endpoint_url": "https://a.example", "notes": "x" * (MAX_NOTES + 1)}, "notes"),
        ({"endpoint_url": "https://a.example", "notes": "nul\x00"}, "notes"),
    ],
)
def test_refused_details_name_the_field(given: dict[str, object], field: str) -> None:
    with pytest.raises(AccessDetailsError) as refused:
        access_details(**given)  # type: ignore[arg-type]
    assert refused.value.field == field


def test_a_refusal_and_a_repr_never_show_a_value() -> None:
    with pytest.raises(AccessDetailsError) as refused:
        access_details(host="secret-host.example", port=70000, user="secret-user")
    assert "secret" not in str(refused.value)
    details = access_details(host="secret-host.example", port=22, user="secret-user", notes="pw")
    assert "secret" not in repr(details)
    assert "pw" not in repr(details)


def test_notes_may_hold_newlines_and_tabs_up_to_the_limit() -> None:
    notes = "line 1\n\tline 2\r\n" + "x" * (MAX_NOTES - 16)
    assert len(notes) == MAX_NOTES
    assert access_details(endpoint_url="http://a.example", notes=notes).notes == notes


def test_encoding_round_trips_and_is_versioned() -> None:
    details = access_details(host="h.example", port=22, user="u", notes="ü ✓")
    data = encode(details)
    assert data.startswith(b'{"endpoint_url":null,')
    assert b'"v":1' in data
    assert decode(data) == details


@pytest.mark.parametrize(
    "data",
    [b"\xff\xfe", b"[]", b'{"v":2,"host":null}', b'{"v":1,"host":"h"}', b"not json"],
)
def test_decoding_refuses_anything_encode_did_not_make(data: bytes) -> None:
    with pytest.raises(AccessDecodeError):
        decode(data)


def test_the_keyring_keeps_its_order_first_seals() -> None:
    other = base64.b64encode(b"\x01" * 32).decode()
    keys = parse_keyring(f"k2:{other}, k1:{KEY}")
    assert [kid for kid, _ in keys] == ["k2", "k1"]
    assert keys[1][1] == bytes(range(32))


@pytest.mark.parametrize(
    "text",
    [
        "",
        "nokid",
        f"bad kid:{KEY}",
        "k1:not-base64!",
        f"k1:{base64.b64encode(b'short').decode()}",
        f"k1:{KEY},k1:{KEY}",
    ],
)
def test_a_malformed_keyring_is_refused_without_showing_a_key(text: str) -> None:
    with pytest.raises(AccessKeyError) as refused:
        parse_keyring(text)
    assert KEY not in str(refused.value)


def test_details_are_erasable_retention_after_the_end() -> None:
    assert erasable_before(NOW, 86_400) == NOW - timedelta(days=1)


def test_access_is_refused_once_a_lease_failed_or_ended_only() -> None:
    refused = {s for s in LeaseStatus if access_refusal(s) is not None}
    assert refused == {LeaseStatus.FAILED, LeaseStatus.ENDED}


def test_reports_go_only_while_the_view_shows_the_lease_provisioning() -> None:
    assert [s.value for s in LeaseStatus if reports_ready(s.value)] == ["provisioning"]
    assert [s.value for s in LeaseStatus if may_report_failure(s.value)] == ["provisioning"]


def test_a_lease_opened_with_a_deadline_provisions_unless_ready_or_final() -> None:
    deadline = NOW + timedelta(minutes=10)
    assert stored_status(held="running", ready=False, provisioning_deadline=deadline) == (
        "provisioning"
    )
    assert stored_status(held="running", ready=False, provisioning_deadline=None) == "running"
    assert stored_status(held="running", ready=True, provisioning_deadline=deadline) == "running"
    for final in ("ended", "failed"):
        assert stored_status(held=final, ready=False, provisioning_deadline=deadline) == final


def test_a_failed_end_fails_the_lease_any_other_ends_it() -> None:
    assert stored_end("failed") == "failed"
    assert [stored_end(r) for r in ("stopped", "completed", "interrupted")] == ["ended"] * 3


def test_the_shown_status_through_the_delivery() -> None:
    later = NOW + timedelta(hours=1)

    def shown(stored: str, started_at: datetime = NOW) -> LeaseStatus:
        return status_of(stored=stored, interrupt_at=None, started_at=started_at, now=NOW)

    assert shown("provisioning") is LeaseStatus.PROVISIONING
    assert shown("provisioning", started_at=later) is LeaseStatus.SCHEDULED
    assert shown("running") is LeaseStatus.RUNNING
    assert shown("failed") is LeaseStatus.FAILED
    assert shown("ended") is LeaseStatus.ENDED
    noticed = lease_status(
        ended=False, interrupt_at=later, started_at=NOW, now=NOW, provisioning=True
    )
    assert noticed is LeaseStatus.INTERRUPTING


def test_a_failed_lease_cannot_be_reclaimed_as_an_ended_one() -> None:
    assert reclaim_refusal(tier="interruptible", status=LeaseStatus.FAILED) is (
        reclaim_refusal(tier="interruptible", status=LeaseStatus.ENDED)
    )


def test_access_details_read_back_as_the_buyer_sees_them() -> None:
    details = AccessDetails(endpoint_url="https://a.example", notes="n")
    assert details.as_dict() == {
        "host": None,
        "port": None,
        "user": None,
        "endpoint_url": "https://a.example",
        "notes": "n",
    }
