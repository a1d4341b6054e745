"""Request and response bodies of the API keys routes."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from gpux_gateway.domain import keys
from gpux_gateway.domain.access import Scope
from gpux_gateway.entrypoints.schemas import Name, Strict
from gpux_gateway.keys.repository import KeyRow


class KeyOut(BaseModel):
    """An API key, without its secret."""

    id: str
    name: str
    prefix: str = Field(description="The public start of the key, `gpx_<id>`.")
    scopes: list[Scope]
    created_at: datetime
    revoked_at: datetime | None


class KeyCreated(BaseModel):
    """A new key: `api_key` is shown in this response only."""

    api_key: str = Field(description="The whole key. Store it now: gpux keeps only a digest.")
    key: KeyOut


class NewKey(Strict):
    """A key to create."""

    name: Name = "api key"
    scopes: list[Scope] | None = Field(
        default=None, max_length=10, description="Default: every scope the account's roles allow."
    )


def key_out(key: KeyRow) -> KeyOut:
    """The public view of a key (never its secret)."""
    return KeyOut(
        id=key.id,
        name=key.name,
        prefix=f"{keys.PREFIX}_{key.id}",
        scopes=sorted(key.scopes),
        created_at=key.created_at,
        revoked_at=key.revoked_at,
    )
