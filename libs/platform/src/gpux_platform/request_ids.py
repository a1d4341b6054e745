"""A request id on every HTTP answer and in every log record written while serving it.

The caller's ``X-Request-Id`` is kept when it is 1 to 128 visible ASCII characters (a proxy's
or a client's id then ties both sides' logs together); otherwise, or without one, the
request gets a new id. It is answered as ``X-Request-Id``, written into problem documents
(``Problem.request_id``) and added to each log record (``RequestIdFilter``).
"""

from __future__ import annotations

import logging
import re
import uuid
from contextvars import ContextVar

from starlette.types import Message, Receive, Scope, Send

from gpux_platform.asgi import HttpMiddleware

HEADER = "X-Request-Id"
PATTERN = r"^[\x21-\x7e]{1,128}$"
"""What a caller's request id may be: 1 to 128 visible ASCII characters (as documented)."""
_VALID = re.compile(r"[\x21-\x7e]{1,128}")
"""``PATTERN`` for ``fullmatch``: ``$`` would let a final newline through."""
STATE_KEY = "gpux_request_id"
"""Where the request's id is kept in its ASGI scope's ``state``, for handlers that answer
after the middleware returned (Starlette's outermost error middleware)."""
_RAW_HEADER = HEADER.lower().encode()

_current: ContextVar[str | None] = ContextVar("gpux_request_id", default=None)


def current() -> str | None:
    """The id of the request being served, if any."""
    return _current.get()


def chosen(sent: str | None) -> str:
    """The request's id: the caller's, if it is a usable one, else a new one."""
    if sent is not None and _VALID.fullmatch(sent):
        return sent
    return str(uuid.uuid4())


def of(scope: Scope) -> str | None:
    """The id of the request of ``scope`` (its state's), else the one being served."""
    state = scope.get("state")
    kept = state.get(STATE_KEY) if isinstance(state, dict) else None
    return kept if isinstance(kept, str) else _current.get()


def _sent(scope: Scope) -> str | None:
    for name, value in scope.get("headers", []):
        if name == _RAW_HEADER:
            return bytes(value).decode("latin-1")
    return None


class RequestIds(HttpMiddleware):
    """ASGI middleware: each request's id, set while it is served and sent back with its
    answer (replacing any the app set).

    The id is also kept in the scope's state (``of``): the handler of an unexpected error
    answers from Starlette's outermost middleware, after this one has reset the context.
    """

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve the request with its id set, the id on its answer."""
        request_id = chosen(_sent(scope))
        scope.setdefault("state", {})[STATE_KEY] = request_id
        token = _current.set(request_id)

        async def answer(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message.get("headers", []) if k != _RAW_HEADER]
                message = {**message, "headers": [*headers, (_RAW_HEADER, request_id.encode())]}
            await send(message)

        try:
            await self.app(scope, receive, answer)
        finally:
            _current.reset(token)


class RequestIdFilter(logging.Filter):
    """Adds ``request_id`` to every record written while a request is served."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Always keeps the record; names the request it was written for."""
        request_id = _current.get()
        if request_id is not None:
            record.request_id = request_id
        return True
