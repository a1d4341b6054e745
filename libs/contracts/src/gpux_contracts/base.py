"""The base of the contracts' shared models: immutable, strict about unknown fields."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class FrozenModel(BaseModel):
    """A model that cannot change once built and refuses fields it does not declare."""

    model_config = ConfigDict(frozen=True, extra="forbid")
