"""Structured logging: key=value lines for people, JSON lines for machines."""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime
from typing import Any

from opentelemetry import trace

from gpux_platform.request_ids import RequestIdFilter

_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {
    "message",
    "asctime",
    "color_message",
}


class _Formatter(logging.Formatter):
    def __init__(self, service: str, as_json: bool) -> None:
        super().__init__()
        self._service = service
        self._json = as_json

    def format(self, record: logging.LogRecord) -> str:
        fields: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "service": self._service,
            "logger": record.name,
            "msg": record.getMessage(),
        }
        span = trace.get_current_span().get_span_context()
        if span.is_valid:
            fields["trace_id"] = format(span.trace_id, "032x")
        fields.update({k: v for k, v in vars(record).items() if k not in _STANDARD})
        if record.exc_info:
            fields["exc"] = self.formatException(record.exc_info)
        if self._json:
            return json.dumps(fields, default=str)
        head = f"{fields.pop('ts')} {fields.pop('level'):<7} {fields.pop('msg')}"
        return head + "".join(f" {k}={v}" for k, v in fields.items())


def setup_logging(service: str, level: str = "INFO", as_json: bool = False) -> None:
    """Route every log record to stderr in one format (with the ``request_id`` of the HTTP
    request it was written for, if any)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_Formatter(service, as_json))
    handler.addFilter(RequestIdFilter())  # every record written while serving names its request
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    for noisy in ("aiokafka", "kafka", "uvicorn.access"):
        logging.getLogger(noisy).setLevel(max(logging.WARNING, logging.getLevelName(level)))
