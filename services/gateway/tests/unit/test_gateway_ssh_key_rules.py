"""The SSH public key rules: each accepted type with its fingerprint, and every refusal."""

from __future__ import annotations

import base64
import hashlib
import struct

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from hypothesis import given
from hypothesis import strategies as st

from gpux_gateway.domain.ssh_keys import MAX_BYTES, SshKeyError, SshKeyType, parse

pytestmark = pytest.mark.unit

PrivateKey = ed25519.Ed25519PrivateKey | ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey


def openssh(private: PrivateKey) -> str:
    """The public key's OpenSSH line (``<type> <base64>``), as a .pub file holds it."""
    line = private.public_key().public_bytes(
        serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH
    )
    return line.decode()


def expected_fingerprint(line: str) -> str:
    """What ``ssh-keygen -l`` prints, computed apart from the code under test."""
    blob = base64.b64decode(line.split()[1])
    return "SHA256:" + base64.b64encode(hashlib.sha256(blob).digest()).decode().rstrip("=")


def ssh_string(data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + data


def wire_line(algorithm: str, *parts: bytes) -> str:
    blob = ssh_string(algorithm.encode()) + b"".join(ssh_string(p) for p in parts)
    return f"{algorithm} {base64.b64encode(blob).decode()}"


ED25519 = openssh(ed25519.Ed25519PrivateKey.generate())
RSA_3072 = openssh(rsa.generate_private_key(public_exponent=65537, key_size=3072))


@pytest.mark.parametrize(
    ("private", "kind", "bits"),
    [
        (ed25519.Ed25519PrivateKey.generate(), SshKeyType.ED25519, None),
        (ec.generate_private_key(ec.SECP256R1()), SshKeyType.ECDSA, 256),
        (ec.generate_private_key(ec.SECP384R1()), SshKeyType.ECDSA, 384),
        (ec.generate_private_key(ec.SECP521R1()), SshKeyType.ECDSA, 521),
        (rsa.generate_private_key(public_exponent=65537, key_size=3072), SshKeyType.RSA, 3072),
        (rsa.generate_private_key(public_exponent=65537, key_size=4096), SshKeyType.RSA, 4096),
    ],
)
def test_each_accepted_type_has_its_ssh_keygen_fingerprint(
    private: PrivateKey, kind: SshKeyType, bits: int | None
) -> None:
    line = openssh(private)
    key = parse(f"{line} alice@laptop  \n")
    assert key.type is kind
    assert key.bits == bits
    assert key.fingerprint == expected_fingerprint(line)
    assert key.public_key == line
    assert key.comment == "alice@laptop"


def test_a_known_key_has_the_fingerprint_ssh_keygen_printed() -> None:
    # ssh-keygen -l -f on this line printed SHA256:r3zd+vZZAxPHpDtwtpStqDRa7DAEfOKIV5VAsN9LM4Q
    line = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIMdu1jOKYPexG8kYae0ZiMB5LVxX3cDRLmcSF+N+NV9e"
    assert parse(line).fingerprint == "SHA256:r3zd+vZZAxPHpDtwtpStqDRa7DAEfOKIV5VAsN9LM4Q"
    assert parse(line).comment == ""


def test_a_comment_may_hold_spaces() -> None:
    assert parse(f"{ED25519} Alice Example (work)").comment == "Alice Example (work)"


PRIVATE_PEM = (
    ed25519.Ed25519PrivateKey.generate()
    .private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.OpenSSH,
        serialization.NoEncryption(),
    )
    .decode()
)
RSA_2048 = openssh(rsa.generate_private_key(public_exponent=65537, key_size=2048))


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("", "empty"),
        ("   \n", "empty"),
        (wire_line("ssh-dss", b"\x01" * 128, b"\x01" * 20, b"\x01" * 128, b"\x01" * 128), "dsa"),
        (RSA_2048, "3072 bits"),
        (PRIVATE_PEM, "private key"),
        (f'from="10.0.0.1" {ED25519}', "options prefixes"),
        (f"no-pty {ED25519}", "options prefixes"),
        (f"{ED25519} a\n{RSA_3072} b", "one line"),
        (f"{ED25519} " + "x" * MAX_BYTES, "at most"),
        ("ssh-ed25519", "base64"),
        ("ssh-ed25519 not*base64", "base64"),
        ("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5", "not a valid"),
        ("ssh-ed25519 " + ED25519.split()[1][:-4], "not a valid"),
        ("ssh-rsa " + ED25519.split()[1], "not a valid"),
        (wire_line("ssh-ed25519", b"\x00" * 31), "not a valid"),
        (ED25519 + " tab\tin comment", "control"),
        ("ecdsa-sha2-nistp192 AAAA", "must start with its type"),
        ("ssh-ed25519-cert-v01@openssh.com AAAA", "must start with its type"),
    ],
)
def test_refusals(text: str, why: str) -> None:
    with pytest.raises(SshKeyError, match=why):
        parse(text)


@given(st.text(max_size=300))
def test_any_text_is_a_key_or_a_refusal(text: str) -> None:
    try:
        key = parse(text)
    except SshKeyError:
        return
    assert key.fingerprint == expected_fingerprint(key.public_key)


@given(
    st.sampled_from(
        ["ssh-ed25519", "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp521", "ssh-rsa", "ssh-dss"]
    ),
    st.binary(max_size=600),
    st.booleans(),
)
def test_random_bytes_after_a_type_are_refused(algorithm: str, data: bytes, header: bool) -> None:
    blob = ssh_string(algorithm.encode()) + data if header else data
    with pytest.raises(SshKeyError):
        parse(f"{algorithm} {base64.b64encode(blob).decode()}")
