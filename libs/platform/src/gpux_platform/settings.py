"""Settings read once from the environment (``GPUX_*``); insecure defaults refused in prod."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Literal

from pydantic import Field, SecretStr, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from gpux_contracts.topics import Topic
from gpux_platform.clock import Clock, ScaledClock, SystemClock


class Environment(StrEnum):
    """Where a service runs."""

    DEV = "dev"
    """A developer's machine or the local demo."""
    TEST = "test"
    """A test session."""
    PROD = "prod"
    """Production: no insecure defaults are accepted."""


DEV_DATABASE_URL = "postgresql://gpux:gpux@127.0.0.1:25432/gpux"


class GpuxSettings(BaseSettings):
    """What every service reads from the environment; services subclass it for their own."""

    model_config = SettingsConfigDict(env_prefix="GPUX_", extra="ignore")

    env: Environment = Environment.DEV
    kafka_bootstrap: str = Field(default="127.0.0.1:29092", min_length=1)
    database_url: SecretStr = SecretStr(DEV_DATABASE_URL)
    redis_url: str = Field(default="redis://127.0.0.1:26379/0", min_length=1)
    namespace: str = Field(
        default="",
        pattern=r"^[a-z0-9._-]*$",
        description="Prefix for topics, consumer groups and Redis keys (test isolation).",
    )
    http_host: str = "127.0.0.1"
    http_port: int = Field(default=8000, ge=0, le=65535)
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    migrate_on_start: bool = Field(
        default=True,
        description="Apply the schema's migrations at start-up. On Kubernetes a Job-like init"
        " container applies them as the migration role, and the runtime role (no DDL) runs"
        " with this off.",
    )
    log_json: bool = False
    otel_exporter: Literal["none", "console", "otlp"] | None = Field(
        default=None,
        description="Deprecated (one release): OTEL_TRACES_EXPORTER, which wins when set.",
    )
    otel_endpoint: str | None = Field(
        default=None,
        description="Deprecated (one release): the traces URL, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
        " (or OTEL_EXPORTER_OTLP_ENDPOINT, which wins when set).",
    )
    consumer_lag_interval_s: float = Field(
        default=5.0,
        gt=0,
        le=300,
        description="How often gpux_consumer_lag is read from the broker for each consumer"
        " group of the process (end offset - committed offset), records arriving or not.",
    )
    outbox_backlog_interval_s: float = Field(
        default=5.0,
        gt=0,
        le=300,
        description="How often an outbox relay measures its unpublished rows"
        " (gpux_outbox_backlog, gpux_outbox_oldest_age_seconds).",
    )
    connect_timeout_s: float = Field(default=5.0, gt=0, le=120)
    readiness_timeout_s: float = Field(
        default=2.0,
        gt=0,
        le=30,
        description="How long each /readyz check may take; they run at once, so /readyz"
        " answers within it (keep it under the readiness probe's timeoutSeconds, 5 s).",
    )
    clock_speed: int = Field(
        default=1,
        ge=1,
        le=3600,
        description="Time runs this many times faster than the wall clock from"
        " `clock_epoch` on (demos and end-to-end tests; refused in prod). Every process of an"
        " exchange needs the same speed and epoch.",
    )
    clock_epoch: datetime | None = Field(
        default=None, description="Timezone-aware instant from which a faster clock runs."
    )

    @model_validator(mode="after")
    def _no_dev_secrets_in_prod(self) -> GpuxSettings:
        if (
            self.env is Environment.PROD
            and self.database_url.get_secret_value() == DEV_DATABASE_URL
        ):
            raise ValueError("GPUX_DATABASE_URL must be set in prod (the dev default is refused)")
        if self.clock_speed != 1:
            if self.env is Environment.PROD:
                raise ValueError("GPUX_CLOCK_SPEED must be 1 in prod")
            if self.clock_epoch is None or self.clock_epoch.tzinfo is None:
                raise ValueError("GPUX_CLOCK_SPEED needs GPUX_CLOCK_EPOCH, timezone-aware")
        return self

    def clock(self) -> Clock:
        """The clock services read: the wall clock, or a faster one (``clock_speed``)."""
        if self.clock_speed == 1 or self.clock_epoch is None:
            return SystemClock()
        return ScaledClock(self.clock_speed, self.clock_epoch)

    def topic(self, topic: Topic) -> str:
        """The topic's name in this namespace."""
        return f"{self.namespace}{topic.name}"

    def group(self, name: str) -> str:
        """A consumer group id in this namespace."""
        return f"{self.namespace}{name}"

    def redis_key(self, *parts: str) -> str:
        """A Redis key in this namespace."""
        return self.namespace + ":".join(parts)
