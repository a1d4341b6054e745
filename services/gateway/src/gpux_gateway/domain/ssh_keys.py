"""SSH public keys a buyer registers: which keys are accepted, and their fingerprints.

Parsing is ``cryptography``'s ``serialization.load_ssh_public_key``: a well-kept, audited
library (the PyCA's, on OpenSSL) that reads the OpenSSH wire format and checks each key's
mathematics (an ecdsa point on its curve, an rsa modulus), so gpux writes no key parser of its
own. The rules around it are gpux's: one ``<type> <base64> [comment]`` line, no options
prefix, no private key, at most 16 KiB; ed25519, ecdsa on nistp256/384/521, or rsa of at
least 3,072 bits. The fingerprint is what ``ssh-keygen -l`` prints: ``SHA256:`` and the
unpadded base64 of the SHA-256 of the key's wire blob.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from dataclasses import dataclass
from enum import StrEnum

from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

MAX_BYTES = 16 * 1024
"""The longest public key text accepted (an rsa key of 16,384 bits is well under it)."""
MIN_RSA_BITS = 3072


class SshKeyType(StrEnum):
    """The kinds of key accepted."""

    ED25519 = "ed25519"
    ECDSA = "ecdsa"
    RSA = "rsa"


_KEY_TYPES = {
    "ssh-ed25519": SshKeyType.ED25519,
    "ecdsa-sha2-nistp256": SshKeyType.ECDSA,
    "ecdsa-sha2-nistp384": SshKeyType.ECDSA,
    "ecdsa-sha2-nistp521": SshKeyType.ECDSA,
    "ssh-rsa": SshKeyType.RSA,
}
_REFUSED_TYPES = {
    "ssh-dss": "dsa keys are not accepted",
}
_BASE64 = re.compile(r"^[A-Za-z0-9+/]+={0,2}$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class SshKeyError(ValueError):
    """Why a text is not an acceptable SSH public key (a 422 on ``public_key``)."""


@dataclass(frozen=True, slots=True)
class SshPublicKey:
    """An accepted key: its OpenSSH line without the comment, and what is shown of it."""

    type: SshKeyType
    public_key: str
    """``<algorithm> <base64>``, as OpenSSH writes it."""
    fingerprint: str
    bits: int | None
    """The rsa modulus or the ecdsa curve size; None for ed25519."""
    comment: str


def fingerprint(blob: bytes) -> str:
    """``SHA256:<base64 of the blob's SHA-256, unpadded>``, as ``ssh-keygen -l`` prints it."""
    digest = base64.b64encode(hashlib.sha256(blob).digest()).decode().rstrip("=")
    return f"SHA256:{digest}"


def _one_line(text: str) -> list[str]:
    """The key line's fields (algorithm, base64, comment), or the refusal of its shape."""
    if len(text.encode("utf-8", "surrogatepass")) > MAX_BYTES:
        raise SshKeyError(f"a public key is at most {MAX_BYTES} bytes")
    if "PRIVATE KEY" in text:
        raise SshKeyError("this is a private key: register its public key (the .pub file)")
    line = text.strip()
    if "\n" in line or "\r" in line:
        raise SshKeyError("one public key, on one line")
    fields = line.split(maxsplit=2)
    if not fields:
        raise SshKeyError("the public key is empty")
    algorithm = fields[0]
    if algorithm in _REFUSED_TYPES:
        raise SshKeyError(_REFUSED_TYPES[algorithm])
    if algorithm not in _KEY_TYPES:
        raise SshKeyError(
            "not an OpenSSH public key: it must start with its type (ssh-ed25519,"
            " ecdsa-sha2-nistp256/384/521 or ssh-rsa); options prefixes are not accepted"
        )
    if len(fields) < 2 or not _BASE64.match(fields[1]):
        raise SshKeyError("the key's base64 is missing or malformed")
    return fields


def _blob(encoded: str) -> bytes:
    try:
        return base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        raise SshKeyError("the key's base64 is malformed") from None


def _loaded(line: str) -> ed25519.Ed25519PublicKey | ec.EllipticCurvePublicKey | rsa.RSAPublicKey:
    try:
        key = serialization.load_ssh_public_key(line.encode("ascii"))
    except (ValueError, UnsupportedAlgorithm, TypeError):
        raise SshKeyError("not a valid OpenSSH public key") from None
    if not isinstance(key, ed25519.Ed25519PublicKey | ec.EllipticCurvePublicKey | rsa.RSAPublicKey):
        raise SshKeyError("only ed25519, ecdsa and rsa keys are accepted")
    return key


def _bits(
    key: ed25519.Ed25519PublicKey | ec.EllipticCurvePublicKey | rsa.RSAPublicKey,
) -> int | None:
    if isinstance(key, rsa.RSAPublicKey):
        if key.key_size < MIN_RSA_BITS:
            raise SshKeyError(
                f"rsa keys need at least {MIN_RSA_BITS} bits (this one has {key.key_size})"
            )
        return key.key_size
    if isinstance(key, ec.EllipticCurvePublicKey):
        return key.curve.key_size
    return None


def parse(text: str) -> SshPublicKey:
    """The accepted key ``text`` holds, or an ``SshKeyError`` saying why it is refused."""
    fields = _one_line(text)
    algorithm, encoded = fields[0], fields[1]
    comment = fields[2].strip() if len(fields) > 2 else ""
    if _CONTROL.search(comment):
        raise SshKeyError("the key's comment holds control characters")
    blob = _blob(encoded)
    key = _loaded(f"{algorithm} {encoded}")
    bits = _bits(key)
    canonical = key.public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH)
    if canonical.decode("ascii") != f"{algorithm} {base64.b64encode(blob).decode()}":
        raise SshKeyError("not a valid OpenSSH public key")
    return SshPublicKey(
        type=_KEY_TYPES[algorithm],
        public_key=canonical.decode("ascii"),
        fingerprint=fingerprint(blob),
        bits=bits,
        comment=comment,
    )
