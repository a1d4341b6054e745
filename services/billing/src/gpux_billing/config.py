"""Settings of the billing service."""

from __future__ import annotations

from pydantic import Field

from gpux_common.settings import GpuxSettings


class BillingSettings(GpuxSettings):
    """Everything the billing service reads from the environment (``GPUX_*``)."""

    http_port: int = Field(default=8104, ge=0, le=65535)
    dev_topups: bool = Field(
        default=False,
        description="Accept the `dev` top-up provider, which confirms at once (local demo only).",
    )
