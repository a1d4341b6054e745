"""Settings of the pricing service."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

from pydantic import Field, model_validator

from gpux_platform.settings import Environment, GpuxSettings
from gpux_pricing.domain.validation import Band
from gpux_pricing.service.fx import stamped_on_read

DEFAULT_FX_FILE = Path(__file__).resolve().parent / "data" / "fx_rates.toml"


class PricingSettings(GpuxSettings):
    """Everything the pricing service reads from the environment (``GPUX_*``)."""

    http_port: int = Field(default=8102, ge=0, le=65535)
    fx_file: Path = Field(default=DEFAULT_FX_FILE, description="Rates the FX loader publishes.")
    fx_refresh_s: float = Field(
        default=3600,
        gt=0,
        description="How often the FX loader reads the file again and republishes its rates.",
    )
    band_low_eur: Decimal = Field(default=Decimal("0.01"), gt=0, description="Sanity band floor.")
    band_high_eur: Decimal = Field(default=Decimal("100"), gt=0, description="Sanity band top.")
    bands: dict[str, tuple[Decimal, Decimal]] = Field(
        default_factory=dict,
        description='Per-GPU bands in EUR, e.g. GPUX_BANDS=\'{"h100-sxm": ["0.50", "20"]}\'.',
    )

    @model_validator(mode="after")
    def _no_development_rates_in_prod(self) -> PricingSettings:
        if self.env is Environment.PROD and stamped_on_read(self.fx_file):
            raise ValueError(
                "GPUX_FX_FILE has no as_of (a development file, stamped when read): refused in"
                " prod; give a snapshot with as_of or publish fx.rates from a real source"
            )
        return self

    def band_for(self, gpu: str) -> Band:
        """The sanity band of one GPU model (its own, else the default)."""
        low, high = self.bands.get(gpu, (self.band_low_eur, self.band_high_eur))
        return Band(low, high)
