"""Settings of the gateway."""

from __future__ import annotations

from pydantic import Field, SecretStr, model_validator

from gpux_platform.settings import Environment, GpuxSettings

DEV_PEPPER = "gpux-dev-pepper-change-me-in-production"


class GatewaySettings(GpuxSettings):
    """Everything the gateway reads from the environment (``GPUX_*``)."""

    http_port: int = Field(default=8000, ge=0, le=65535)
    admin_key: SecretStr | None = Field(
        default=None, description="Bootstrap admin key (at least 32 characters); none: no admin."
    )
    key_pepper: SecretStr = Field(
        default=SecretStr(DEV_PEPPER), description="Server secret that API key digests use."
    )
    rate_limit: str = Field(default="600/minute", description="Per API key, `limits` notation.")
    anonymous_rate_limit: str = Field(default="30/minute", description="Per client address.")
    idempotency_ttl_h: int = Field(default=48, ge=24, le=24 * 30)
    principal_cache_size: int = Field(
        default=100_000, ge=1, description="API keys whose principal is kept in memory."
    )
    max_body_bytes: int = Field(default=1_048_576, ge=1024)
    max_writes_in_flight: int = Field(
        default=256,
        ge=1,
        description="Writes of orders and offers under way at once; more are refused (503).",
    )
    max_view_lag: int = Field(
        default=50_000,
        ge=1,
        description="Records the views may be behind their topics before writes are refused.",
    )
    overload_retry_after_s: int = Field(
        default=1, ge=1, le=60, description="`Retry-After` of a write refused for overload."
    )
    cors_origins: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _secrets_in_prod(self) -> GatewaySettings:
        if self.env is Environment.PROD and self.key_pepper.get_secret_value() == DEV_PEPPER:
            raise ValueError("GPUX_KEY_PEPPER must be set in prod (the dev default is refused)")
        if self.admin_key is not None and len(self.admin_key.get_secret_value()) < 32:
            raise ValueError("GPUX_ADMIN_KEY must be at least 32 characters")
        return self
