"""Settings of the catalog service."""

from __future__ import annotations

from pydantic import Field

from gpux_common.settings import GpuxSettings


class CatalogSettings(GpuxSettings):
    """Everything the catalog service reads from the environment (``GPUX_*``)."""

    http_port: int = Field(default=8101, ge=0, le=65535)
