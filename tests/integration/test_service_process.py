"""A service as a real process: it starts, answers health checks, fails clearly on bad config,
and SIGTERM stops it through its own stop (loops, broker, connections), exit code 0."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from gpux_devinfra.testing.processes import ServiceProcess, service_env
from gpux_platform.settings import GpuxSettings


async def test_gateway_process_serves_health_readiness_and_openapi(
    own_settings: GpuxSettings, tmp_path: Path
) -> None:
    # Its own database and namespace: on the session's it would join the in-process gateway's
    # consumer groups and share its outbox.
    env = service_env(own_settings, connect_timeout_s=3)
    gateway = ServiceProcess("gpux_gateway", env, tmp_path / "gateway.log")
    gateway.start()
    try:
        await gateway.ready(timeout_s=60)
        async with httpx.AsyncClient(base_url=gateway.url, timeout=10) as client:
            ready = await client.get("/readyz")
            assert ready.status_code == 200, ready.text
            assert ready.json()["checks"] == {"kafka": "ok", "postgres": "ok", "redis": "ok"}
            assert (await client.get("/healthz")).json()["status"] == "ok"
            assert "/healthz" in (await client.get("/openapi.json")).json()["paths"]
            missing = await client.get("/no-such-thing")
            assert missing.status_code == 404
            assert missing.headers["content-type"] == "application/problem+json"
            metrics = (await client.get("/metrics")).text
        assert 'gpux_http_request_seconds_count{method="GET",route="/healthz",status="200"}' in (
            metrics
        )
        assert 'route="unmatched",status="404"' in metrics
    finally:
        gateway.terminate()
        assert gateway.proc is not None
        assert gateway.proc.wait(timeout=30) is not None, gateway.tail()
    # Not killed by the SIGTERM uvicorn raises again after its shutdown: the process stopped
    # its loops, its broker and its connections, and said so.
    assert gateway.proc.returncode == 0, gateway.tail()
    assert re.search(r" info +stopped service=gateway ", gateway.tail()), gateway.tail()


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
