"""Request and response bodies of the API keys routes."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from gpux_gateway.domain import keys
from gpux_gateway.domain.access import Scope
from gpux_gateway.entrypoints.schemas import Name, Strict, examples, from_row, listing
from gpux_gateway.keys.repository import KeyRow

KEY_ID = "gdzoc62jqtxxxucc"
API_KEY = f"gpx_{KEY_ID}_xUExIBqNzgr5fmkRseJs77OFIPcDy7cPiZ5KbDx0c4A"
"""An API key as the examples show it: `gpx_<key id>_<secret>`."""
KEY = {
    "id": KEY_ID,
    "name": "first key",
    "prefix": f"gpx_{KEY_ID}",
    "scopes": ["keys:manage", "orders:write", "read", "wallet:write"],
    "created_at": "2025-06-02T09:00:11Z",
    "revoked_at": None,
}
"""A buyer's first key, as listed."""


class KeyOut(BaseModel):
    """An API key, without its secret."""

    model_config = examples(KEY)

    id: str
    name: str
    prefix: str = Field(description="The public start of the key, `gpx_<id>`.")
    scopes: list[Scope]
    created_at: datetime
    revoked_at: datetime | None


class KeyList(BaseModel):
    """The account's API keys, in id order, revoked ones included."""

    model_config = listing(KeyOut)

    items: list[KeyOut]


class KeyCreated(BaseModel):
    """A new key: `api_key` is shown in this response only."""

    model_config = examples(
        {
            "api_key": "gpx_x5b2wtiaqr24drbt_uc-tjK-ceRtVRer1ClnqMMNs6eAW8wmxkKvdf9WSg10",
            "key": {
                **KEY,
                "id": "x5b2wtiaqr24drbt",
                "name": "ci reader",
                "prefix": "gpx_x5b2wtiaqr24drbt",
                "scopes": ["read"],
                "created_at": "2025-06-02T09:14:03Z",
            },
        }
    )

    api_key: str = Field(description="The whole key. Store it now: gpux keeps only a digest.")
    key: KeyOut


class NewKey(Strict):
    """A key to create."""

    model_config = examples({"name": "ci reader", "scopes": ["read"]}, {})

    name: Name = "api key"
    scopes: list[Scope] | None = Field(
        default=None, max_length=10, description="Default: every scope the account's roles allow."
    )


def key_out(key: KeyRow) -> KeyOut:
    """The public view of a key (never its secret)."""
    return from_row(KeyOut, key, prefix=f"{keys.PREFIX}_{key.id}", scopes=sorted(key.scopes))
