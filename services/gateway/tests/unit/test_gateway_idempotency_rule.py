"""The idempotency rule: which keys are usable, what identifies a request, what a reuse gets."""

from __future__ import annotations

from datetime import timedelta

import pytest

from gpux_gateway.domain.idempotency import (
    Once,
    Replay,
    StoredResponse,
    fingerprint,
    is_usable_key,
    replay,
)

pytestmark = pytest.mark.unit


def test_a_key_is_1_to_255_visible_ascii_characters() -> None:
    assert is_usable_key("a")
    assert is_usable_key("~" * 255)
    assert not is_usable_key("")
    assert not is_usable_key("x" * 256)
    assert not is_usable_key("with space")
    assert not is_usable_key("é")


def test_a_fingerprint_is_method_path_and_body() -> None:
    first = fingerprint("POST", "/v1/orders", '{"gpus":1}')
    assert first == fingerprint("POST", "/v1/orders", '{"gpus":1}')
    assert first != fingerprint("POST", "/v1/orders", '{"gpus":2}')
    assert first != fingerprint("POST", "/v1/offers", '{"gpus":1}')
    assert first != fingerprint("PUT", "/v1/orders", '{"gpus":1}')


def test_the_same_content_replays_and_other_content_is_a_conflict() -> None:
    once = Once("acct", "k", fingerprint("POST", "/v1/orders", "{}"), timedelta(hours=24))
    assert replay(None, once) is Replay.NEW
    assert replay(StoredResponse(once.fingerprint, 202, {}), once) is Replay.REPLAY
    assert replay(StoredResponse("other", 202, {}), once) is Replay.CONFLICT
