"""Settings of the gateway."""

from __future__ import annotations

from decimal import Decimal
from enum import StrEnum

from pydantic import Field, SecretStr, model_validator
from pydantic_settings import SettingsConfigDict

from gpux_contracts.payouts import DEFAULT_MINIMUM
from gpux_gateway.domain.handoff import AccessKeyError, parse_keyring
from gpux_platform.settings import Environment, GpuxSettings

DEV_PEPPER = "gpux-dev-pepper-change-me-in-production"
DEV_ACCESS_KEYS = "dev:Z3B1eC1kZXYtYWNjZXNzLWtleS1ub3QtZm9yLXByb2Q="
"""The access key outside prod (32 known bytes: prod refuses it)."""
VIEWS_HTTP_PORT = 8105
"""Where a ``views`` process answers health and metrics unless ``GPUX_HTTP_PORT`` says."""


class GatewayRole(StrEnum):
    """What one gateway process runs (``GPUX_GATEWAY_ROLE``)."""

    ALL = "all"
    """The API and the consumers of its PostgreSQL views, in one process."""
    API = "api"
    """The HTTP API, the in-memory views of compacted topics, the outbox relay and the timers;
    the PostgreSQL views are kept by ``views`` processes."""
    VIEWS = "views"
    """Only the batched consumers that keep the PostgreSQL views, with the outbox relay of the
    re-buys they place (health and metrics on HTTP): read load on the API cannot slow them
    down."""


class GatewaySettings(GpuxSettings):
    """Everything the gateway reads from the environment (``GPUX_*``)."""

    # Its secrets (the pepper, access keys, the database URL) never show in a refusal.
    model_config = SettingsConfigDict(hide_input_in_errors=True)

    gateway_role: GatewayRole = Field(
        default=GatewayRole.ALL,
        description="`all` (API and view consumers), `api` or `views` (one part each).",
    )
    http_port: int = Field(
        default=8000,
        ge=0,
        le=65535,
        description=f"The API's port; a `views` process's health and metrics: {VIEWS_HTTP_PORT}.",
    )
    admin_key: SecretStr | None = Field(
        default=None, description="Bootstrap admin key (at least 32 characters); none: no admin."
    )
    key_pepper: SecretStr = Field(
        default=SecretStr(DEV_PEPPER), description="Server secret that API key digests use."
    )
    access_keys: SecretStr = Field(
        default=SecretStr(DEV_ACCESS_KEYS),
        description="AES-256-GCM keys of lease access details: `kid:base64(32 bytes)`,"
        " comma-separated; the first seals, all open (rotation: put the new key first).",
    )
    access_retention_s: int = Field(
        default=86_400,
        ge=0,
        description="How long access details are kept after their lease ended or failed.",
    )
    rate_limit: str = Field(default="600/minute", description="Per API key, `limits` notation.")
    anonymous_rate_limit: str = Field(default="30/minute", description="Per client address.")
    idempotency_ttl_h: int = Field(default=48, ge=24, le=24 * 30)
    payout_minimum: Decimal = Field(
        default=Decimal(DEFAULT_MINIMUM),
        ge=0,
        description="The smallest payout a seller may ask for, the same number in every"
        " currency (billing's `GPUX_PAYOUT_MINIMUM` too: set both alike).",
    )
    account_events_retention_s: int = Field(
        default=7 * 86_400,
        ge=3600,
        description="How long account events are kept (for streams resuming and webhooks'"
        " logs); one with a webhook delivery still pending is kept until it is finished.",
    )
    session_ttl_h: int = Field(
        default=12, ge=1, le=24 * 30, description="How long a browser session lasts."
    )
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
    webhooks_allow_private: bool = Field(
        default=False,
        description="Webhook endpoints may be http and target private, loopback or other"
        " non-public addresses (development and tests only).",
    )
    webhooks_retry_base_s: float = Field(
        default=30.0, gt=0, description="A failed delivery's first retry delay (doubling)."
    )
    webhooks_retry_cap_s: float = Field(
        default=6 * 3600.0, gt=0, description="The longest delay between a delivery's attempts."
    )
    webhooks_retry_for_s: float = Field(
        default=72 * 3600.0,
        gt=0,
        description="How long after its first attempt a delivery is retried; an endpoint"
        " failing that long without a success is disabled.",
    )
    webhooks_poll_s: float = Field(
        default=1.0, gt=0, description="How often the dispatcher looks for due deliveries."
    )
    webhooks_parallel: int = Field(
        default=16, ge=1, description="Deliveries the dispatcher sends at once (per process)."
    )

    @model_validator(mode="after")
    def _views_port(self) -> GatewaySettings:
        # A views process beside an API on its default port must not take that port.
        if self.gateway_role is GatewayRole.VIEWS and "http_port" not in self.model_fields_set:
            self.http_port = VIEWS_HTTP_PORT
        return self

    @model_validator(mode="after")
    def _secrets_in_prod(self) -> GatewaySettings:
        # A views process never reads a key: it needs no pepper (and is better without one).
        if (
            self.env is Environment.PROD
            and self.gateway_role is not GatewayRole.VIEWS
            and self.key_pepper.get_secret_value() == DEV_PEPPER
        ):
            raise ValueError("GPUX_KEY_PEPPER must be set in prod (the dev default is refused)")
        if (
            self.env is Environment.PROD
            and self.gateway_role is not GatewayRole.VIEWS
            and DEV_ACCESS_KEYS in self.access_keys.get_secret_value()
        ):
            raise ValueError("GPUX_ACCESS_KEYS must be set in prod (the dev key is refused)")
        if self.env is Environment.PROD and self.webhooks_allow_private:
            raise ValueError("GPUX_WEBHOOKS_ALLOW_PRIVATE is refused in prod (development only)")
        try:
            parse_keyring(self.access_keys.get_secret_value())
        except AccessKeyError as exc:
            raise ValueError(f"GPUX_ACCESS_KEYS: {exc}") from None
        if self.admin_key is not None and len(self.admin_key.get_secret_value()) < 32:
            raise ValueError("GPUX_ADMIN_KEY must be at least 32 characters")
        return self
