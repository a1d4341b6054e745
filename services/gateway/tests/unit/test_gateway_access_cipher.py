"""Sealing access details with AES-256-GCM: round trips, key rotation (an old key opens, the
new one seals), and what does not open (tampered, another lease's, an unknown key)."""

from __future__ import annotations

import base64
import dataclasses

import pytest

from gpux_gateway.adapters.access_cipher import NONCE_BYTES, AesGcmAccessCipher
from gpux_gateway.config import DEV_ACCESS_KEYS
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
