"""A service as a real process: it starts, answers health checks, fails clearly on bad config."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import httpx
import pytest

from gpux_devinfra.testing.processes import service_env
from gpux_devinfra.testing.services import free_port
from gpux_platform.settings import GpuxSettings


def test_gateway_process_serves_health_readiness_and_openapi(gpux_settings: GpuxSettings) -> None:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "gpux_gateway"],
        env=service_env(gpux_settings, connect_timeout_s=3, http_port=port),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        ready = None
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                ready = httpx.get(f"{base}/readyz", timeout=2)
                if ready.status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.3)
        assert ready is not None, "the gateway never answered"
        assert ready.status_code == 200, ready.text
        assert ready.json()["checks"] == {"kafka": "ok", "postgres": "ok", "redis": "ok"}
        assert httpx.get(f"{base}/healthz").json()["status"] == "ok"
        assert "/healthz" in httpx.get(f"{base}/openapi.json").json()["paths"]
        missing = httpx.get(f"{base}/no-such-thing")
        assert missing.status_code == 404
        assert missing.headers["content-type"] == "application/problem+json"
        metrics = httpx.get(f"{base}/metrics").text
        assert 'gpux_http_request_seconds_count{method="GET",route="/healthz",status="200"}' in (
            metrics
        )
        assert 'route="unmatched",status="404"' in metrics
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) is not None


@pytest.mark.parametrize(
    ("setting", "value"),
    [
        ("GPUX_DATABASE_URL", "postgresql://gpux:wrong@127.0.0.1:1/nowhere"),
        ("GPUX_KAFKA_BOOTSTRAP", "127.0.0.1:1"),
        ("GPUX_REDIS_URL", "redis://127.0.0.1:1/0"),
        ("GPUX_HTTP_PORT", "not-a-port"),
    ],
)
def test_bad_configuration_is_one_line_naming_the_setting(
    gpux_settings: GpuxSettings, setting: str, value: str
) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "gpux_pricing"],
        env={**service_env(gpux_settings, connect_timeout_s=3), setting: value},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert setting in lines[0]
    assert "Traceback" not in proc.stderr
    assert "wrong" not in proc.stderr  # the password is redacted
