"""Request and response bodies of the SSH keys routes."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from gpux_gateway.domain.ssh_keys import MAX_BYTES, SshKeyType
from gpux_gateway.entrypoints.schemas import Name, Strict, examples, from_row
from gpux_gateway.ssh_keys.repository import SshKeyRow

ED25519 = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIMdu1jOKYPexG8kYae0ZiMB5LVxX3cDRLmcSF+N+NV9e"
"""An ed25519 public key, as the examples show it."""


class NewSshKey(Strict):
    """A public key to register."""

    model_config = examples({"name": "laptop", "public_key": f"{ED25519} me@laptop"})

    name: Name = "ssh key"
    public_key: str = Field(
        max_length=MAX_BYTES,
        description="One OpenSSH public key line (`ssh-ed25519 AAAA... comment`, as in a .pub"
        " file): ed25519, ecdsa (nistp256/384/521) or rsa of at least 3072 bits.",
        examples=[
            "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIMdu1jOKYPexG8kYae0ZiMB5LVxX3cDRLmcSF+N+NV9e"
            " me@laptop"
        ],
    )


class SshKeyOut(BaseModel):
    """A registered SSH public key."""

    model_config = examples(
        {
            "id": "01JWQYD4787JT40YXJSDW0GB9A",
            "name": "laptop",
            "type": "ed25519",
            "public_key": ED25519,
            "fingerprint": "SHA256:r3zd+vZZAxPHpDtwtpStqDRa7DAEfOKIV5VAsN9LM4Q",
            "bits": None,
            "comment": "me@laptop",
            "created_at": "2025-06-02T09:25:31Z",
        }
    )

    id: str
    name: str
    type: SshKeyType
    public_key: str = Field(description="The key as OpenSSH writes it, without its comment.")
    fingerprint: str = Field(description="`SHA256:...`, as `ssh-keygen -l` prints it.")
    bits: int | None = Field(description="The rsa modulus or ecdsa curve size; null for ed25519.")
    comment: str
    created_at: datetime


def ssh_key_out(row: SshKeyRow) -> SshKeyOut:
    """The public view of a stored key."""
    return from_row(SshKeyOut, row)
