"""Webhooks' rules: which URLs and addresses endpoints may target, the event types they may
subscribe to, the retry schedule, and when an endpoint is disabled."""

from __future__ import annotations

import base64
import ipaddress
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from gpux_gateway.config import GatewaySettings
from gpux_gateway.domain import webhooks as rules

pytestmark = pytest.mark.unit

T0 = datetime(2026, 1, 1, tzinfo=UTC)
POLICY = rules.RetryPolicy()

BLOCKED = [
    "127.0.0.1",
    "127.255.0.9",
    "10.1.2.3",
    "172.16.0.1",
    "172.31.255.255",
    "192.168.1.1",
    "100.64.0.1",  # shared (carrier-grade NAT)
    "169.254.169.254",  # link-local: cloud metadata
    "0.0.0.0",
    "0.1.2.3",
    "224.0.0.1",
    "239.255.255.250",
    "240.0.0.1",
    "255.255.255.255",
    "192.0.2.10",  # documentation
    "198.18.0.1",  # benchmarking
    "::1",
    "::",
    "fe80::1",
    "fc00::1",
    "fd12:3456::1",
    "fec0::1",  # site-local
    "ff02::1",
    "2001:db8::1",  # documentation
    "::ffff:127.0.0.1",
    "::ffff:10.0.0.1",
    "::ffff:169.254.169.254",
    "64:ff9b::a00:1",  # NAT64 of 10.0.0.1
    "2002:a00:1::1",  # 6to4 of 10.0.0.1
]
PUBLIC = ["8.8.8.8", "1.1.1.1", "93.184.216.34", "2606:4700:4700::1111", "::ffff:8.8.8.8"]


@pytest.mark.parametrize("text", BLOCKED)
def test_non_public_addresses_are_blocked(text: str) -> None:
    assert rules.is_blocked(ipaddress.ip_address(text))


@pytest.mark.parametrize("text", PUBLIC)
def test_public_addresses_are_allowed(text: str) -> None:
    assert not rules.is_blocked(ipaddress.ip_address(text))


def test_one_blocked_address_among_the_resolved_blocks_the_host() -> None:
    assert rules.blocked_among(["8.8.8.8", "1.1.1.1"]) is None
    assert rules.blocked_among(["8.8.8.8", "10.0.0.1"]) == "10.0.0.1"
    assert rules.blocked_among(["fe80::1%eth0"]) == "fe80::1%eth0"
    assert rules.blocked_among(["not-an-ip"]) == "not-an-ip"


@given(st.ip_addresses(v=4, network="10.0.0.0/8") | st.ip_addresses(v=6, network="fc00::/7"))
def test_every_private_address_is_blocked_also_as_mapped_v4(
    address: ipaddress.IPv4Address | ipaddress.IPv6Address,
) -> None:
    assert rules.is_blocked(address)
    if isinstance(address, ipaddress.IPv4Address):
        assert rules.is_blocked(ipaddress.IPv6Address(f"::ffff:{address}"))


def test_a_target_is_an_https_url_with_a_host_and_its_port() -> None:
    assert rules.target("https://example.com/hook", allow_http=False) == rules.Target(
        "https", "example.com", 443
    )
    assert rules.target("https://Example.com:8443/h?x=1", allow_http=False).port == 8443
    assert rules.target("http://127.0.0.1:9000/h", allow_http=True) == rules.Target(
        "http", "127.0.0.1", 9000
    )
    assert rules.target("https://[::1]:444/", allow_http=False).host == "::1"


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("http://example.com/hook", "https"),
        ("ftp://example.com/", "https"),
        ("example.com/hook", "https"),
        ("https://user:pw@example.com/", "user name"),
        ("https://user@example.com/", "user name"),
        ("https:///path", "no host"),
        ("https://example.com/#frag", "fragment"),
        ("https://example.com:99999/", "valid"),
        ("https://exa mple.com/", "spaces"),
        ("https://example.com/\n", "control"),
        ("https://example.com/" + "a" * 2048, "at most"),
    ],
)
def test_refused_urls_say_why(url: str, why: str) -> None:
    with pytest.raises(rules.WebhookUrlError, match=why):
        rules.target(url, allow_http=False)


def test_http_is_allowed_only_when_asked() -> None:
    assert rules.target("http://example.com/", allow_http=True).port == 80
    with pytest.raises(rules.WebhookUrlError):
        rules.target("http://example.com/", allow_http=False)


def test_event_types_must_be_known_or_every_type() -> None:
    known = ["lease.ready", "order.filled"]
    assert rules.event_types_error(["lease.ready"], known) is None
    assert rules.event_types_error(["*"], known) is None
    assert "at least one" in (rules.event_types_error([], known) or "")
    assert "lease.bogus" in (rules.event_types_error(["lease.ready", "lease.bogus"], known) or "")
    assert rules.subscription(["lease.ready", "*"]) == ("*",)
    assert rules.subscription(["b", "a", "b"]) == ("b", "a")


def test_backoff_doubles_from_the_base_and_stops_at_the_cap() -> None:
    delays = [rules.backoff(n, POLICY, 0.0).total_seconds() for n in range(1, 14)]
    assert delays[:5] == [30, 60, 120, 240, 480]
    assert max(delays) == 6 * 3600
    assert delays[-1] == 6 * 3600
    assert rules.backoff(10_000, POLICY, 0.0) == timedelta(hours=6)


@given(failures=st.integers(min_value=1, max_value=200), jitter=st.floats(-1.0, 1.0))
def test_jitter_moves_a_delay_by_at_most_ten_percent(failures: int, jitter: float) -> None:
    plain = rules.backoff(failures, POLICY, 0.0).total_seconds()
    moved = rules.backoff(failures, POLICY, jitter).total_seconds()
    assert plain * 0.9 - 1e-6 <= moved <= plain * 1.1 + 1e-6


def test_jitter_beyond_one_is_clamped_and_no_failure_has_no_backoff() -> None:
    assert rules.backoff(1, POLICY, 5.0) == timedelta(seconds=33)
    with pytest.raises(ValueError, match="at least one failure"):
        rules.backoff(0, POLICY, 0.0)


def test_retries_stop_72_hours_after_the_first_attempt() -> None:
    assert rules.next_attempt(T0, T0, 1, POLICY, 0.0) == T0 + timedelta(seconds=30)
    late = T0 + timedelta(hours=70)
    assert rules.next_attempt(T0, late, 30, POLICY, 0.0) is None
    assert rules.next_attempt(T0, late - timedelta(hours=5), 30, POLICY, 0.0) == late + timedelta(
        hours=1
    )


def test_a_whole_run_of_failures_ends_within_the_window() -> None:
    now, failures = T0, 0
    while True:
        failures += 1
        due = rules.next_attempt(T0, now, failures, POLICY, 1.0)
        if due is None:
            break
        now = due
    assert now <= T0 + POLICY.retry_for
    assert 15 < failures < 30


def test_an_endpoint_is_disabled_after_failing_for_the_window() -> None:
    assert not rules.endpoint_gives_up(T0, T0 + timedelta(hours=71), POLICY)
    assert rules.endpoint_gives_up(T0, T0 + timedelta(hours=72), POLICY)
    assert "72 h" in rules.disabled_reason(T0, POLICY)


def test_a_delivery_failing_for_good_through_a_failing_run_disables_the_endpoint() -> None:
    soon = T0 + timedelta(hours=1)
    assert rules.endpoint_gives_up(T0, soon, POLICY, given_up_run=T0)
    assert rules.endpoint_gives_up(T0, soon, POLICY, given_up_run=T0 + timedelta(minutes=1))
    # A success came after the delivery's run began: the run is not all failures.
    assert not rules.endpoint_gives_up(soon, soon, POLICY, given_up_run=T0)
    assert not rules.endpoint_gives_up(T0, soon, POLICY, given_up_run=None)


@pytest.mark.parametrize(
    ("status", "ok"),
    [
        (200, True),
        (204, True),
        (299, True),
        (301, False),
        (404, False),
        (500, False),
        (None, False),
    ],
)
def test_only_a_2xx_is_a_success(status: int | None, ok: bool) -> None:
    assert rules.is_success(status) is ok


def test_prod_refuses_webhooks_to_private_targets() -> None:
    keys = "k1:" + base64.b64encode(b"k" * 32).decode()
    prod: dict[str, Any] = {
        "env": "prod",
        "database_url": "postgresql://svc:pw@db:5432/gpux",
        "key_pepper": "a-production-pepper-0123456789abcdef",
        "access_keys": keys,
    }
    with pytest.raises(ValidationError, match="GPUX_WEBHOOKS_ALLOW_PRIVATE is refused in prod"):
        GatewaySettings(webhooks_allow_private=True, **prod)
    assert not GatewaySettings(**prod).webhooks_allow_private
    assert GatewaySettings(webhooks_allow_private=True).webhooks_allow_private
