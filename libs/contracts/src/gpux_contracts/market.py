"""Market sessions: whether trading is open or halted, for every GPU model or for one.

Produced by the gateway (admin ``POST /v1/admin/market``) on ``market.sessions``, a compacted
topic of one partition keyed by the scope: ``*`` for the whole market, else the GPU id. The
latest record per key is the state of that scope. Before any record, every scope is open.
A GPU model trades only while both ``*`` and its own scope are open.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, ClassVar

from pydantic import AwareDatetime, Field, StringConstraints

from gpux_contracts.events import Payload

ALL_GPUS = "*"
"""The scope (and record key) of the whole market."""

Scope = Annotated[str, StringConstraints(pattern=r"^(\*|[a-z0-9][a-z0-9.-]{0,63})$")]
"""``*`` (every GPU model) or one GPU id."""


class MarketState(StrEnum):
    """Whether new orders may trade."""

    OPEN = "open"
    """New funded orders are matched."""
    HALTED = "halted"
    """New funded orders are rejected (``market_halted``); resting orders and offers stay."""


HALTED_REASON = "market_halted"
"""The ``reason`` of an order the book rejected because its market was halted."""


class MarketStateChanged(Payload):
    """An admin opened or halted trading for the whole market or one GPU model (latest per key)."""

    event_type: ClassVar[str] = "market.state_changed"
    schema_version: ClassVar[int] = 1

    scope: Scope = Field(description="`*` for every GPU model, else the GPU id; the record key.")
    state: MarketState
    reason: str | None = Field(default=None, max_length=200, description="Why (shown to users).")
    changed_at: AwareDatetime = Field(description="When the admin changed it.")
    changed_by: str = Field(description="Who changed it (`admin`).")
