"""Write the documents the web app's API client is generated from (``make openapi``).

- ``web/openapi.json``: the gateway's OpenAPI document, exactly as its ``/openapi.json``
  serves it: the app is built the way ``python -m gpux_gateway`` builds it (the platform's
  ``build_app`` with the gateway's routers), on a runtime whose stores are never touched
  (building the document connects to nothing).
- ``web/openapi-stream.json``: the payload of each ``best_ask`` event of
  ``/v1/stream/prices`` (``gpux_contracts.prices.BestAskChanged``, which pricing writes and
  the gateway relays as it is), as an OpenAPI document of components only: OpenAPI cannot
  describe an event stream's items, and the client's types must still come from the code.

``--check`` writes nothing and exits 1 naming each committed copy that differs.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, cast

from opentelemetry.sdk.trace import TracerProvider

from gpux_contracts.prices import BestAskChanged
from gpux_gateway.bootstrap import SPEC
from gpux_gateway.entrypoints import http
from gpux_platform.service import Runtime, Wiring, build_app

WEB = Path(__file__).resolve().parents[1]
API_DOCUMENT = WEB / "openapi.json"
STREAM_DOCUMENT = WEB / "openapi-stream.json"


def api_document() -> dict[str, Any]:
    """The gateway's OpenAPI document."""
    untouched = cast(Any, None)  # the stores: building the document never uses them
    runtime = Runtime(
        name=SPEC.name,
        settings=untouched,
        pool=untouched,
        redis=untouched,
        broker=untouched,
        tracer_provider=TracerProvider(),
    )
    app = build_app(SPEC, runtime, Wiring(http=list(http.ROUTERS)))
    return app.openapi()


def stream_document() -> dict[str, Any]:
    """The price stream's event payload as the components of an OpenAPI document."""
    schema = BestAskChanged.model_json_schema(ref_template="#/components/schemas/{model}")
    components = schema.pop("$defs", {})
    components[BestAskChanged.__name__] = schema
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "gpux price stream events",
            "version": "1",
            "description": "The `data` of each `best_ask` event of GET /v1/stream/prices.",
        },
        "paths": {},
        "components": {"schemas": dict(sorted(components.items()))},
    }


def render(document: dict[str, Any]) -> str:
    """Stable text: two-space indents, non-ASCII kept, a final newline."""
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def main() -> int:
    """Write both documents, or with ``--check`` compare them with the committed copies."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare, write nothing")
    check = parser.parse_args().check
    stale = []
    for path, document in ((API_DOCUMENT, api_document()), (STREAM_DOCUMENT, stream_document())):
        text = render(document)
        if not check:
            path.write_text(text, encoding="utf-8")
        elif not path.is_file() or path.read_text(encoding="utf-8") != text:
            stale.append(path.name)
    if stale:
        print(f"stale: {', '.join(stale)}; run `make openapi` and commit web/", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
