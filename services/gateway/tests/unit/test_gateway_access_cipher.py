"""Sealing access details with AES-256-GCM: round trips, key rotation (an old key opens, the
new one seals), and what does not open (tampered, another lease's, an unknown key)."""

from __future__ import annotations

import base64
import dataclasses
from typing import Any

import pytest
from pydantic import ValidationError

from gpux_gateway.adapters.access_cipher import NONCE_BYTES, AesGcmAccessCipher
from gpux_gateway.config import DEV_ACCESS_KEYS, GatewayRole, GatewaySettings
from gpux_gateway.domain.handoff import AccessUnreadable

pytestmark = pytest.mark.unit

OLD = base64.b64encode(b"\x11" * 32).decode()
NEW = base64.b64encode(b"\x22" * 32).decode()
SECRET = b'{"host":"10.0.0.7","user":"root"}'


def test_sealed_details_open_under_their_lease_only() -> None:
    cipher = AesGcmAccessCipher.from_setting(f"old:{OLD}")
    sealed = cipher.seal(SECRET, associated="lease-1")
    assert sealed.key_id == "old"
    assert len(sealed.nonce) == NONCE_BYTES
    assert SECRET not in sealed.ciphertext
    assert cipher.open(sealed, associated="lease-1") == SECRET
    with pytest.raises(AccessUnreadable):
        cipher.open(sealed, associated="lease-2")


def test_each_sealing_takes_a_fresh_nonce() -> None:
    cipher = AesGcmAccessCipher.from_setting(f"old:{OLD}")
    first, second = (cipher.seal(SECRET, associated="l") for _ in range(2))
    assert first.nonce != second.nonce
    assert first.ciphertext != second.ciphertext


def test_after_rotation_the_new_key_seals_and_the_old_one_still_opens() -> None:
    before = AesGcmAccessCipher.from_setting(f"old:{OLD}")
    sealed_before = before.seal(SECRET, associated="lease-1")
    rotated = AesGcmAccessCipher.from_setting(f"new:{NEW},old:{OLD}")
    assert rotated.sealing_key_id == "new"
    assert rotated.open(sealed_before, associated="lease-1") == SECRET
    sealed_after = rotated.seal(SECRET, associated="lease-1")
    assert sealed_after.key_id == "new"
    with pytest.raises(AccessUnreadable, match="no access key new"):
        before.open(sealed_after, associated="lease-1")


def test_a_tampered_ciphertext_nonce_or_key_id_does_not_open() -> None:
    cipher = AesGcmAccessCipher.from_setting(f"new:{NEW},old:{OLD}")
    sealed = cipher.seal(SECRET, associated="lease-1")
    flipped = bytes([sealed.ciphertext[0] ^ 1]) + sealed.ciphertext[1:]
    for tampered in (
        dataclasses.replace(sealed, ciphertext=flipped),
        dataclasses.replace(sealed, nonce=bytes(NONCE_BYTES)),
        dataclasses.replace(sealed, key_id="old"),
    ):
        with pytest.raises(AccessUnreadable) as refused:
            cipher.open(tampered, associated="lease-1")
        assert "10.0.0.7" not in str(refused.value)


def test_the_dev_key_is_a_valid_keyring() -> None:
    cipher = AesGcmAccessCipher.from_setting(DEV_ACCESS_KEYS)
    assert cipher.open(cipher.seal(SECRET, associated="l"), associated="l") == SECRET


def test_a_sealed_value_shows_no_bytes_in_its_repr() -> None:
    sealed = AesGcmAccessCipher.from_setting(f"old:{OLD}").seal(SECRET, associated="l")
    assert repr(sealed) == "Sealed(key_id='old')"


PROD: dict[str, Any] = {
    "env": "prod",
    "database_url": "postgresql://svc:pw@db:5432/gpux",
    "key_pepper": "a-production-pepper-0123456789abcdef",
}


def test_prod_refuses_to_serve_the_api_without_access_keys_of_its_own() -> None:
    for role in ("all", "api"):
        with pytest.raises(ValidationError, match="GPUX_ACCESS_KEYS must be set in prod"):
            GatewaySettings(gateway_role=role, **PROD)
        with pytest.raises(ValidationError, match="GPUX_ACCESS_KEYS must be set in prod"):
            GatewaySettings(gateway_role=role, access_keys=f"new:{NEW},{DEV_ACCESS_KEYS}", **PROD)
    configured = GatewaySettings(gateway_role="api", access_keys=f"new:{NEW},old:{OLD}", **PROD)
    assert (
        AesGcmAccessCipher.from_setting(configured.access_keys.get_secret_value()).sealing_key_id
        == "new"
    )
    # A views process never reads access details.
    assert GatewaySettings(gateway_role="views", **PROD).gateway_role is GatewayRole.VIEWS


def test_a_malformed_keyring_stops_any_process_without_showing_the_key() -> None:
    with pytest.raises(ValidationError, match="GPUX_ACCESS_KEYS: key k1: 32 bytes") as refused:
        GatewaySettings(access_keys="k1:" + base64.b64encode(b"short-secret").decode())
    assert base64.b64encode(b"short-secret").decode() not in str(refused.value)
    assert GatewaySettings().access_retention_s == 86_400
