"""Sealing access details with AES-256-GCM (``cryptography``'s ``AESGCM``).

Keys are ``GPUX_ACCESS_KEYS`` (``domain.handoff.parse_keyring``): the first seals, each one
opens what it sealed, found by the key id stored beside the ciphertext. A nonce is 12 random
bytes per sealing (``os.urandom``), and the lease id is the associated data: a ciphertext
copied onto another lease's row does not open. Rotation: put a new key first (new posts are
sealed with it), keep the old ones after it until the rows they sealed were erased (at most
``GPUX_ACCESS_RETENTION_S`` after their leases ended) or posted again, then drop them.
"""

from __future__ import annotations

import os

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from gpux_gateway.domain.handoff import AccessUnreadable, Sealed, parse_keyring

NONCE_BYTES = 12


class AesGcmAccessCipher:
    """Seals and opens access details under the keyring's keys."""

    def __init__(self, keys: tuple[tuple[str, bytes], ...]) -> None:
        if not keys:
            raise ValueError("at least one access key is needed")
        self._sealing_id = keys[0][0]
        self._keys = {kid: AESGCM(key) for kid, key in keys}

    @classmethod
    def from_setting(cls, text: str) -> AesGcmAccessCipher:
        """The cipher of a ``GPUX_ACCESS_KEYS`` value."""
        return cls(parse_keyring(text))

    @property
    def sealing_key_id(self) -> str:
        """The id of the key new details are sealed with."""
        return self._sealing_id

    def seal(self, plaintext: bytes, *, associated: str) -> Sealed:
        """The details sealed with the first key, a fresh nonce, ``associated`` as AAD."""
        nonce = os.urandom(NONCE_BYTES)
        aead = self._keys[self._sealing_id]
        ciphertext = aead.encrypt(nonce, plaintext, associated.encode())
        return Sealed(key_id=self._sealing_id, nonce=nonce, ciphertext=ciphertext)

    def open(self, sealed: Sealed, *, associated: str) -> bytes:
        """The plaintext of sealed details; ``AccessUnreadable`` if they cannot be opened."""
        aead = self._keys.get(sealed.key_id)
        if aead is None:
            raise AccessUnreadable(f"no access key {sealed.key_id} is configured")
        try:
            return aead.decrypt(sealed.nonce, sealed.ciphertext, associated.encode())
        except InvalidTag:
            raise AccessUnreadable(f"sealed under {sealed.key_id}: does not open") from None
