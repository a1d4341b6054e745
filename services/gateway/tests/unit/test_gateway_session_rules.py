"""The session cookie's format and its CSRF token (pure rules)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from gpux_gateway.domain import sessions

PEPPER = b"pepper for tests"


@given(st.binary(min_size=42, max_size=42))
def test_a_new_session_round_trips_through_its_cookie(raw: bytes) -> None:
    made = sessions.new_session(raw)
    assert sessions.parse_cookie(sessions.format_cookie(made.session_id, made.secret)) == made


@given(st.binary(min_size=42, max_size=42), st.binary(min_size=42, max_size=42))
def test_the_csrf_token_is_the_sessions_own(one: bytes, two: bytes) -> None:
    first, second = sessions.new_session(one), sessions.new_session(two)
    token = sessions.csrf_token(PEPPER, first.secret)
    assert sessions.csrf_ok(PEPPER, first.secret, token)
    assert sessions.csrf_ok(PEPPER, second.secret, token) == (first.secret == second.secret)
    assert not sessions.csrf_ok(b"another pepper", first.secret, token)


def test_no_token_or_a_foreign_cookie_is_refused() -> None:
    made = sessions.new_session(bytes(42))
    assert not sessions.csrf_ok(PEPPER, made.secret, None)
    assert not sessions.csrf_ok(PEPPER, made.secret, "")
    assert sessions.parse_cookie("gpx_" + made.session_id + "_" + made.secret) is None
    assert sessions.parse_cookie("gps_short_secret") is None


def test_only_the_digest_of_the_secret_is_kept() -> None:
    made = sessions.new_session(bytes(range(42)))
    stored = sessions.digest(PEPPER, made.secret)
    assert made.secret.encode() not in stored
    assert sessions.matches(PEPPER, made.secret, stored)
    assert not sessions.matches(PEPPER, made.secret[:-1] + "A", stored)
