"""Settings of the catalog service."""

from __future__ import annotations

from pydantic import Field

from gpux_platform.settings import GpuxSettings


class CatalogSettings(GpuxSettings):
    """Everything the catalog service reads from the environment (``GPUX_*``)."""

    http_port: int = Field(default=8101, ge=0, le=65535)
    publish_check_s: float = Field(
        default=300.0,
        gt=0,
        le=86_400,
        description="How often to check whether the catalog topics need publishing again.",
    )
