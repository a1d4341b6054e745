"""A service as a real process: it starts, answers health checks, fails clearly on bad config."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time

import httpx
import pytest

from gpux_common.settings import GpuxSettings


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _env(settings: GpuxSettings, **overrides: str) -> dict[str, str]:
    env = {
        **os.environ,
        "GPUX_ENV": "test",
        "GPUX_KAFKA_BOOTSTRAP": settings.kafka_bootstrap,
        "GPUX_DATABASE_URL": settings.database_url.get_secret_value(),
        "GPUX_REDIS_URL": settings.redis_url,
        "GPUX_NAMESPACE": settings.namespace,
        "GPUX_CONNECT_TIMEOUT_S": "3",
    }
    env.update(overrides)
    return env


def test_gateway_process_serves_health_readiness_and_openapi(gpux_settings: GpuxSettings) -> None:
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "gpux_gateway"],
        env=_env(gpux_settings, GPUX_HTTP_PORT=str(port)),
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
        env=_env(gpux_settings, **{setting: value}),
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
