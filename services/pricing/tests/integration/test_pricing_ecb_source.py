"""The pricing service with GPUX_FX_SOURCE=ecb, on real Kafka, PostgreSQL and Redis: at start
it reads the ECB's daily file (the recorded one, served on loopback: no network), publishes
its rates on ``fx.rates``, takes them back as the rates it holds, and exposes their ages on
/metrics once its age watch has run."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from gpux_contracts.topics import FX_RATES, REGISTRY
from gpux_devinfra.testing.kafka import published
from gpux_devinfra.testing.services import running
from gpux_devinfra.testing.waiting import eventually
from gpux_platform.broker import ensure_topics
from gpux_platform.settings import GpuxSettings
from gpux_pricing.bootstrap import SPEC

RECORDED = (Path(__file__).resolve().parents[1] / "data" / "eurofxref-daily.xml").read_bytes()


class EcbFile(BaseHTTPRequestHandler):
    """Serves the recorded daily file at any path, as the ECB's site serves it."""

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/xml")
        self.send_header("Content-Length", str(len(RECORDED)))
        self.end_headers()
        self.wfile.write(RECORDED)

    def log_message(self, format: str, *args: object) -> None:
        return None


@pytest.fixture
def ecb_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), EcbFile)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/stats/eurofxref/eurofxref-daily.xml"
    finally:
        server.shutdown()
        thread.join()


async def test_pricing_publishes_the_ecb_rates_at_start_and_watches_their_age(
    module_settings: GpuxSettings, ecb_url: str
) -> None:
    await ensure_topics(module_settings, REGISTRY)
    async with running(
        SPEC, module_settings, fx_source="ecb", fx_ecb_url=ecb_url, fx_check_every_s=0.2
    ) as service:
        records = await published(
            service.settings,
            FX_RATES,
            lambda body: body["payload"]["source"].startswith("ECB"),
            at_least=2,
        )
        rates = {r.key: r.body["payload"]["rate"] for r in records}
        assert rates == {"USD/EUR": "0.9199632015", "GBP/EUR": "1.1800106201"}
        assert {r.body["payload"]["as_of"] for r in records} == {"2026-11-27T13:15:00Z"}

        async def metrics() -> str:
            async with service.client() as client:
                return (await client.get("/metrics")).text

        text = await eventually(
            metrics, lambda t: 'gpux_fx_rate_age_seconds{currency="USD"}' in t, what="ages"
        )
    line = next(
        x for x in text.splitlines() if x.startswith('gpux_fx_rate_age_seconds{currency="USD"}')
    )
    age_s = float(line.split()[-1])
    expected = (datetime.now(UTC) - datetime(2026, 11, 27, 13, 15, tzinfo=UTC)).total_seconds()
    assert 0 < age_s <= expected
    assert 'gpux_fx_reads_total{outcome="published",source="ecb"}' in text
