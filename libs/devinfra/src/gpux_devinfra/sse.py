"""Server-sent events read line by line (the ``text/event-stream`` format, pure).

Feed each line of the body (without its line break) to ``SseParser.line``: it answers the
event that a blank line completes, else None. Comments (``: ping``) and ``retry:`` fields are
kept on the parser for whoever wants them.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class SseEvent:
    """One dispatched event: its ``event:`` type (``message`` by default), ``id:``, data."""

    event: str
    id: str | None
    data: str


@dataclass
class SseParser:
    """The event being read, and the stream's last id, comments and retry."""

    last_id: str | None = None
    retry_ms: int | None = None
    comments: int = 0
    _event: str = ""
    _data: list[str] = field(default_factory=list)

    def line(self, line: str) -> SseEvent | None:
        """Take one line; the event it completes (a blank line after some data), or None."""
        if not line:
            return self._dispatch()
        if line.startswith(":"):
            self.comments += 1
            return None
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id" and "\0" not in value:
            self.last_id = value
        elif name == "retry" and value.isdigit():
            self.retry_ms = int(value)
        return None

    def _dispatch(self) -> SseEvent | None:
        data, kind = self._data, self._event
        self._data, self._event = [], ""
        if not data:
            return None
        return SseEvent(kind or "message", self.last_id, "\n".join(data))
