"""Webhook signatures: what sign() writes, verify() accepts, and everything verify() refuses."""

from __future__ import annotations

import hashlib
import hmac

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from gpux_contracts.webhooks import SignatureError, sign, verify

SECRET = "whsec_test"
BODY = b'{"id":"01H","type":"lease.ready"}'
T = 1_764_600_000


def test_the_header_is_t_and_the_hex_hmac_of_t_dot_body() -> None:
    expected = hmac.new(SECRET.encode(), f"{T}.".encode() + BODY, hashlib.sha256).hexdigest()
    assert sign(SECRET, BODY, T) == f"t={T},v1={expected}"


@given(
    secret=st.text(min_size=1, max_size=64),
    body=st.binary(max_size=2048),
    timestamp=st.integers(min_value=0, max_value=2**40),
    skew=st.integers(min_value=-300, max_value=300),
)
def test_a_signed_body_verifies_within_the_tolerance(
    secret: str, body: bytes, timestamp: int, skew: int
) -> None:
    verify(secret, sign(secret, body, timestamp), body, now=timestamp + skew)


@given(body=st.binary(max_size=256), other=st.binary(max_size=256))
def test_another_body_is_refused(body: bytes, other: bytes) -> None:
    assume(body != other)
    with pytest.raises(SignatureError):
        verify(SECRET, sign(SECRET, body, T), other, now=T)


def test_another_secret_is_refused() -> None:
    with pytest.raises(SignatureError, match="no signature matches"):
        verify("whsec_other", sign(SECRET, BODY, T), BODY, now=T)


@pytest.mark.parametrize("now", [T + 301, T - 301, T + 10_000])
def test_a_timestamp_outside_the_tolerance_is_refused(now: int) -> None:
    with pytest.raises(SignatureError, match="tolerance"):
        verify(SECRET, sign(SECRET, BODY, T), BODY, now=now)


def test_the_tolerance_is_a_parameter() -> None:
    header = sign(SECRET, BODY, T)
    verify(SECRET, header, BODY, now=T + 1000, tolerance_s=1000)
    with pytest.raises(SignatureError):
        verify(SECRET, header, BODY, now=T + 1001, tolerance_s=1000)


def test_any_of_several_v1_signatures_may_match_during_a_rotation() -> None:
    old = sign("whsec_old", BODY, T).split(",")[1]
    new = sign(SECRET, BODY, T)
    verify(SECRET, f"{new},{old}", BODY, now=T)
    verify(SECRET, f"t={T},{old},{new.split(',')[1]}", BODY, now=T)


def test_unknown_schemes_are_ignored_but_a_v1_is_required() -> None:
    header = sign(SECRET, BODY, T)
    verify(SECRET, f"{header},v0=abc", BODY, now=T)
    with pytest.raises(SignatureError, match="no v1"):
        verify(SECRET, f"t={T},v0=abc", BODY, now=T)


@pytest.mark.parametrize(
    "header",
    [
        "",
        "garbage",
        f"v1={'a' * 64}",
        f"t=abc,v1={'a' * 64}",
        f"t=-5,v1={'a' * 64}",
        f"t=\u0661\u0662,v1={'a' * 64}",
        f"t=\u00b2,v1={'a' * 64}",
        f"t={T},t={T},v1={'a' * 64}",
        f"t={T},v1=",
        f"t={T},v1",
    ],
)
def test_malformed_headers_are_refused(header: str) -> None:
    with pytest.raises(SignatureError):
        verify(SECRET, header, BODY, now=T)
