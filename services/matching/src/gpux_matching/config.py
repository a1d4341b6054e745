"""Settings of the matching service."""

from __future__ import annotations

from pydantic import Field

from gpux_platform.settings import GpuxSettings


class MatchingSettings(GpuxSettings):
    """Everything the matching service reads from the environment (``GPUX_*``)."""

    http_port: int = Field(default=8103, ge=0, le=65535)
    snapshot_every: int = Field(
        default=1000, ge=1, description="Commands between two snapshots of the engine."
    )
    expiry_interval_s: float = Field(
        default=1.0, gt=0, description="Seconds between two expiry checks of the book."
    )
