"""Settings of the matching service."""

from __future__ import annotations

from pydantic import Field

from gpux_common.settings import GpuxSettings


class MatchingSettings(GpuxSettings):
    """Everything the matching service reads from the environment (``GPUX_*``)."""

    http_port: int = Field(default=8103, ge=0, le=65535)
