"""Settings of the pricing service."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

from pydantic import Field

from gpux_common.settings import GpuxSettings

DEFAULT_FX_FILE = Path(__file__).resolve().parent / "data" / "fx_rates.toml"


class PricingSettings(GpuxSettings):
    """Everything the pricing service reads from the environment (``GPUX_*``)."""

    http_port: int = Field(default=8102, ge=0, le=65535)
    fx_file: Path = Field(default=DEFAULT_FX_FILE, description="Rates the FX loader publishes.")
    band_low_eur: Decimal = Field(default=Decimal("0.01"), gt=0, description="Sanity band floor.")
    band_high_eur: Decimal = Field(default=Decimal("100"), gt=0, description="Sanity band top.")
