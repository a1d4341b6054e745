"""Settings of the pricing service."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Literal

from pydantic import Field, HttpUrl, model_validator

from gpux_platform.settings import Environment, GpuxSettings
from gpux_pricing.domain.validation import Band
from gpux_pricing.service.fx import stamped_on_read

DEFAULT_FX_FILE = Path(__file__).resolve().parent / "data" / "fx_rates.toml"
ECB_DAILY_URL = "https://www.ecb.europa.eu/stats/eurofxref/eurofxref-daily.xml"
BILLING_FX_MAX_AGE_S = 7 * 24 * 3600
"""Billing's default staleness limit (``GPUX_FX_MAX_AGE_S`` there): holds refuse older rates."""


class PricingSettings(GpuxSettings):
    """Everything the pricing service reads from the environment (``GPUX_*``)."""

    http_port: int = Field(default=8102, ge=0, le=65535)
    fx_source: Literal["file", "ecb"] = Field(
        default="file",
        description="Where the FX loader takes its rates: `file` (GPUX_FX_FILE) or `ecb` (the"
        " ECB's euro foreign exchange reference rates at GPUX_FX_ECB_URL).",
    )
    fx_file: Path = Field(default=DEFAULT_FX_FILE, description="Rates the FX loader publishes.")
    fx_ecb_url: HttpUrl = Field(
        default=HttpUrl(ECB_DAILY_URL),
        description="The ECB's daily reference rates (XML), read when GPUX_FX_SOURCE=ecb.",
    )
    fx_refresh_s: float = Field(
        default=3600,
        gt=0,
        description="How often the FX loader reads its source again and republishes its rates"
        " (the ECB publishes once a working day, around 16:00 CET).",
    )
    fx_retry_s: float = Field(
        default=300, gt=0, description="How soon the FX loader tries again after a failed read."
    )
    fx_fetch_timeout_s: float = Field(
        default=10, gt=0, description="Timeout of each HTTP request to the ECB (connect, read)."
    )
    fx_fetch_attempts: int = Field(
        default=3,
        ge=1,
        le=10,
        description="Attempts per ECB read (transport errors, 429 and 5xx are tried again).",
    )
    fx_warn_after_s: int = Field(
        default=4 * 24 * 3600,
        gt=0,
        lt=BILLING_FX_MAX_AGE_S,
        description="A held rate older than this is warned (log, `gpux_fx_rate_age_seconds`):"
        " well before billing refuses it (7 days), and past a long weekend's ECB gap.",
    )
    fx_check_every_s: float = Field(
        default=60, gt=0, description="How often the age of every held rate is checked."
    )
    read_models_check_s: float = Field(
        default=1.0,
        gt=0,
        description="How often pricing checks that Redis still holds its read models (none of"
        " their writes failed, Redis did not restart empty) and rebuilds them if not.",
    )
    band_low_eur: Decimal = Field(default=Decimal("0.01"), gt=0, description="Sanity band floor.")
    band_high_eur: Decimal = Field(default=Decimal("100"), gt=0, description="Sanity band top.")
    bands: dict[str, tuple[Decimal, Decimal]] = Field(
        default_factory=dict,
        description='Per-GPU bands in EUR, e.g. GPUX_BANDS=\'{"h100-sxm": ["0.50", "20"]}\'.',
    )

    @model_validator(mode="after")
    def _no_development_rates_in_prod(self) -> PricingSettings:
        if self.env is not Environment.PROD:
            return self
        if self.fx_source == "file" and stamped_on_read(self.fx_file):
            raise ValueError(
                "GPUX_FX_FILE has no as_of (a development file, stamped when read): refused in"
                " prod; set GPUX_FX_SOURCE=ecb or give a snapshot with as_of"
            )
        if self.fx_source == "ecb" and self.fx_ecb_url.scheme != "https":
            raise ValueError("GPUX_FX_ECB_URL must be https in prod")
        return self

    def band_for(self, gpu: str) -> Band:
        """The sanity band of one GPU model (its own, else the default)."""
        low, high = self.bands.get(gpu, (self.band_low_eur, self.band_high_eur))
        return Band(low, high)
