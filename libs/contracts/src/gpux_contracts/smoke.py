"""Plumbing check: a ping any service can send and any service can answer."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from gpux_contracts.events import Payload


class PingSent(Payload):
    """A service sent a ping through Kafka (used by the smoke tests and `gpux` diagnostics)."""

    event_type: ClassVar[str] = "ping.sent"
    schema_version: ClassVar[int] = 1

    ping_id: str = Field(description="Id of this ping.")
    note: str = Field(default="", max_length=200, description="Free text for people.")
