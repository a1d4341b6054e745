"""What a logger writes while a test runs, as the records a service's handler would get.

``kept(logger)`` collects the records through the platform's ``RequestIdFilter`` (as
``gpux_platform.logs.setup_logging`` installs it), so a test can read each record's
``request_id`` as a log line would show it.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator

from gpux_platform.request_ids import RequestIdFilter


class _Keep(logging.Handler):
    def __init__(self, into: list[logging.LogRecord]) -> None:
        super().__init__()
        self._into = into

    def emit(self, record: logging.LogRecord) -> None:
        self._into.append(record)


@contextlib.contextmanager
def kept(logger: logging.Logger, level: int = logging.INFO) -> Iterator[list[logging.LogRecord]]:
    """The records ``logger`` writes (at ``level`` and above) in the block, in order."""
    records: list[logging.LogRecord] = []
    handler = _Keep(records)
    handler.addFilter(RequestIdFilter())
    before = logger.level
    logger.addHandler(handler)
    logger.setLevel(level)
    try:
        yield records
    finally:
        logger.removeHandler(handler)
        logger.setLevel(before)
