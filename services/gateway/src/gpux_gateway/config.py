"""Settings of the gateway service."""

from __future__ import annotations

from pydantic import Field

from gpux_common.settings import GpuxSettings


class GatewaySettings(GpuxSettings):
    """Everything the gateway service reads from the environment (``GPUX_*``)."""

    http_port: int = Field(default=8000, ge=0, le=65535)
