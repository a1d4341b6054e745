"""The web app's API client is generated from web/openapi.json: that copy must be what the
gateway serves (the document rebuilt from the code here, and the running gateway's)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

WEB = Path(__file__).resolve().parents[2] / "web"


@pytest.mark.unit
def test_the_committed_documents_are_the_generated_ones() -> None:
    done = subprocess.run(
        [sys.executable, str(WEB / "scripts" / "openapi.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr


@pytest.mark.e2e
async def test_the_running_gateway_serves_the_committed_document(exchange: str) -> None:
    async with httpx.AsyncClient(base_url=exchange, timeout=10) as client:
        served = (await client.get("/openapi.json")).json()
    assert served == json.loads((WEB / "openapi.json").read_text(encoding="utf-8"))


@pytest.mark.e2e
async def test_the_web_app_shadows_none_of_the_gateways_own_paths(exchange: str) -> None:
    async with httpx.AsyncClient(base_url=exchange, timeout=10) as client:
        page = await client.get("/gpus/rtx-4090")
        assert page.status_code == 200
        assert page.headers["content-type"].startswith("text/html")
        assert "default-src 'self'" in page.headers["content-security-policy"]
        unknown = await client.get("/v1/no-such-thing")
        assert unknown.status_code == 404
        assert unknown.headers["content-type"] == "application/problem+json"
        assert (await client.get("/healthz")).json()["status"] == "ok"
        assert "swagger" in (await client.get("/docs")).text.lower()
        assert (await client.get("/metrics")).headers["content-type"].startswith("text/plain")
        assert (await client.post("/gpus/rtx-4090")).status_code == 404
