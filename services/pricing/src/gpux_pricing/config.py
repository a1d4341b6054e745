"""Settings of the pricing service."""

from __future__ import annotations

from pydantic import Field

from gpux_common.settings import GpuxSettings


class PricingSettings(GpuxSettings):
    """Everything the pricing service reads from the environment (``GPUX_*``)."""

    http_port: int = Field(default=8102, ge=0, le=65535)
