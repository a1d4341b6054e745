"""The examples a model states reach the document as stated: FastAPI's encoder drops every
null of the document, and the platform puts the examples' nulls back."""

from __future__ import annotations

import pytest
from fastapi import FastAPI
from pydantic import BaseModel, ConfigDict

from gpux_platform.openapi import install_openapi

pytestmark = pytest.mark.unit


class Key(BaseModel):
    """An example with a null, as an API answers it."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"id": "k1", "revoked_at": None}]})

    id: str
    revoked_at: str | None


class Keys(BaseModel):
    """A model that holds the other."""

    model_config = ConfigDict(
        json_schema_extra={"examples": [{"items": [{"id": "k1", "revoked_at": None}]}]}
    )

    items: list[Key]


def test_examples_keep_their_nulls() -> None:
    app = FastAPI()
    install_openapi(app)

    @app.get("/keys")
    async def list_keys() -> Keys:
        return Keys(items=[])

    @app.post("/keys")
    async def create_key(body: Key) -> Key:
        return body

    schemas = app.openapi()["components"]["schemas"]
    assert schemas["Key"]["examples"] == [{"id": "k1", "revoked_at": None}]
    assert schemas["Keys"]["examples"] == [{"items": [{"id": "k1", "revoked_at": None}]}]
