"""The CLI's side of the generated SDK (``gpux_sdk``): clients, one-line errors, keys of writes.

Every ``gpux`` command calls the API through ``gpux_sdk``'s operations (``gpux_sdk.api.<tag>.
<operation_id>``). This module makes their clients (``client``), turns an answer into its
parsed model or an ``ApiError`` whose message is one line for people (``result``: the problem
document's status, title and detail, or why the API could not be reached), and names the
Idempotency-Key every write sends (``write_key``).

``call`` tries a request again when trying again is safe and may help: a GET, or a write that
carries an Idempotency-Key (sent again with the same key, so the gateway answers it as the
first try, done once), after a connection that failed or timed out, or an answer 429, 502,
503 or 504 (after its ``Retry-After`` when it gives one); at most ``MAX_ATTEMPTS`` tries, none
started more than ``RETRY_WITHIN_S`` after the first. Any other request is sent once.
"""

from __future__ import annotations

import json
import random
import re
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any, TypeVar

import httpx

from gpux_sdk import AuthenticatedClient, Client
from gpux_sdk.models.problem import Problem
from gpux_sdk.types import Response

DEFAULT_API_URL = "http://127.0.0.1:8000"
API_URL_ENV = "GPUX_API_URL"
API_KEY_ENV = "GPUX_API_KEY"
TIMEOUT_S = 10.0
MAX_PAGES = 100
PAGE_SIZE = 100
IDEMPOTENCY_KEY = "Idempotency-Key"
_KEY = re.compile(r"[\x21-\x7e]{1,255}")
"""What the gateway takes as an Idempotency-Key: 1 to 255 visible ASCII characters."""
RETRY_STATUSES = frozenset({429, 502, 503, 504})
"""Answers that say "not now" (slow down, the gateway or a proxy before it is unavailable)."""
MAX_ATTEMPTS = 4
RETRY_WITHIN_S = 30.0
"""How long after the first try a retry may still start."""
BACKOFF_S = 0.5
"""The wait before the first retry without ``Retry-After`` (doubled each time, jittered)."""
BACKOFF_CAP_S = 8.0

T = TypeVar("T")

transport: httpx.BaseTransport | None = None
"""The transport every client uses (None: the network); tests set one (``testing.cli``)."""
clock: Callable[[], float] = time.monotonic
"""What the retries read the time from (tests set a clock of their own)."""
pause: Callable[[float], None] = time.sleep
"""How the retries wait (tests set theirs)."""


class ApiError(Exception):
    """A call that failed; the message is one line naming why."""

    def __init__(
        self,
        message: str,
        status: int | None = None,
        kind: str = "",
        idempotency_key: str | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        """The HTTP status of the answer; None when the API did not answer."""
        self.kind = kind
        """The problem document's ``type`` ("" without one)."""
        self.idempotency_key = idempotency_key
        """The Idempotency-Key of a write that failed for a reason of the moment (no answer, or
        429/502/503/504 to the last try): sent again with it, the write is done at most once."""


def httpx_args(through: httpx.BaseTransport | None = None) -> dict[str, Any]:
    """The arguments a client gives httpx: its transport, ``through`` if given, else the
    module's ``transport`` when a test set one."""
    chosen = through or transport
    return {"transport": chosen} if chosen is not None else {}


def public_client(
    api: str, *, timeout_s: float = TIMEOUT_S, through: httpx.BaseTransport | None = None
) -> Client:
    """A client of the gateway at ``api`` without credentials (the catalog, the market)."""
    return Client(
        base_url=api.rstrip("/"), timeout=httpx.Timeout(timeout_s), httpx_args=httpx_args(through)
    )


def account_client(
    api: str,
    key: str,
    *,
    timeout_s: float = TIMEOUT_S,
    through: httpx.BaseTransport | None = None,
) -> AuthenticatedClient:
    """A client of the gateway at ``api`` acting as the account of API key ``key``."""
    return AuthenticatedClient(
        base_url=api.rstrip("/"),
        token=key,
        timeout=httpx.Timeout(timeout_s),
        httpx_args=httpx_args(through),
    )


def problem_line(status: int, content: bytes, reason: str = "") -> str:
    """One line from an error answer: ``404 Not found: no GPU model 'x'``."""
    try:
        body = json.loads(content)
    except ValueError:
        body = None
    if isinstance(body, dict) and isinstance(body.get("title"), str):
        detail = body.get("detail")
        suffix = f": {detail}" if isinstance(detail, str) and detail else ""
        return f"{status} {body['title']}{suffix}"
    return f"{status} {reason}".rstrip()


def problem_type(response: Response[Any]) -> str:
    """The ``type`` of a problem answer ("" for anything else)."""
    parsed = response.parsed
    if isinstance(parsed, Problem):
        return parsed.type_
    return ""


def result(response: Response[T | Problem]) -> T:
    """The parsed answer of a successful call; else ``ApiError`` with the problem's one line."""
    status = int(response.status_code)
    if 200 <= status < 300 and not isinstance(response.parsed, Problem):
        if response.parsed is None and status != 204:
            raise ApiError(f"{status} answer the SDK could not read", status)
        return response.parsed  # type: ignore[return-value]  # None only for a 204
    line = problem_line(status, response.content, response.status_code.phrase)
    raise ApiError(line, status, problem_type(response))


def call(
    operation: Callable[..., Response[T | Problem]],
    api_client: AuthenticatedClient | Client,
    **kwargs: Any,
) -> T:
    """``operation.sync_detailed`` (pass the function) with ``kwargs``; its parsed answer.

    A network failure becomes an ``ApiError`` too ("cannot reach the gpux API at ..."), and so
    does an answer the SDK cannot read: an error answer that is no problem document (a proxy's
    502 page) by its status, anything else as unreadable. A failure of the moment is tried
    again where that is safe (see the module docstring).
    """
    http = api_client.get_httpx_client()
    answers: list[httpx.Response] = []
    keep = answers.append
    http.event_hooks["response"].append(keep)
    started, attempt = clock(), 0
    try:
        while True:
            attempt += 1
            answers.clear()
            outcome = _attempt(operation, api_client, kwargs, answers)
            if not isinstance(outcome, _Failed):
                return outcome
            wait = _retry_wait(outcome, attempt, started)
            if wait is None:
                raise outcome.final()
            pause(wait)
    finally:
        http.event_hooks["response"].remove(keep)


@dataclass(frozen=True)
class _Failed:
    """One try that failed: why, what was sent (None: nothing was) and what came back."""

    error: ApiError
    request: httpx.Request | None
    answer: httpx.Response | None

    @property
    def transient(self) -> bool:
        """Whether trying the same request again may succeed: it was sent, and the connection
        failed or the answer says "not now"."""
        if self.request is None:
            return False
        return self.answer is None or self.answer.status_code in RETRY_STATUSES

    @property
    def safe_again(self) -> bool:
        """Whether the request may be sent again: a GET, or a write with an Idempotency-Key."""
        request = self.request
        return request is not None and (
            request.method == "GET" or IDEMPOTENCY_KEY in request.headers
        )

    def final(self) -> ApiError:
        """The error to raise: naming the write's key when sending it again could succeed."""
        key = self.request.headers.get(IDEMPOTENCY_KEY) if self.request is not None else None
        if not (self.transient and key):
            return self.error
        error = self.error
        return ApiError(str(error), error.status, error.kind, idempotency_key=key)


def _attempt(
    operation: Callable[..., Response[T | Problem]],
    api_client: AuthenticatedClient | Client,
    kwargs: dict[str, Any],
    answers: list[httpx.Response],
) -> T | _Failed:
    """One try of the operation: its parsed answer, or how it failed."""
    base = api_client.get_httpx_client().base_url
    try:
        response = operation(client=api_client, **kwargs)
    except (httpx.TimeoutException, httpx.NetworkError) as exc:
        message = f"cannot reach the gpux API at {base} ({str(exc) or type(exc).__name__})"
        return _Failed(ApiError(message), _request_of(exc), None)
    except httpx.HTTPError as exc:
        return _Failed(ApiError(f"cannot reach the gpux API at {base} ({exc})"), None, None)
    except (KeyError, TypeError, ValueError) as exc:
        raw = answers[-1] if answers else None
        return _Failed(_unreadable(base, answers, exc), _sent(raw), raw)
    try:
        return result(response)
    except ApiError as exc:
        raw = answers[-1] if answers else None
        return _Failed(exc, _sent(raw), raw)


def _request_of(exc: httpx.RequestError) -> httpx.Request | None:
    try:
        return exc.request
    except RuntimeError:  # raised without its request
        return None


def _sent(answer: httpx.Response | None) -> httpx.Request | None:
    return answer.request if answer is not None else None


def _retry_wait(failed: _Failed, attempt: int, started: float) -> float | None:
    """How long to wait before trying again (None: do not)."""
    if attempt >= MAX_ATTEMPTS or not (failed.transient and failed.safe_again):
        return None
    asked = retry_after(failed.answer) if failed.answer is not None else None
    if asked is None:
        backoff = min(BACKOFF_CAP_S, BACKOFF_S * 2 ** (attempt - 1))
        asked = backoff * random.uniform(0.5, 1.0)  # jitter, not a secret
    if clock() + asked - started > RETRY_WITHIN_S:
        return None
    return asked


def retry_after(answer: httpx.Response) -> float | None:
    """The answer's ``Retry-After`` in seconds (delay-seconds or an HTTP date; None without a
    readable one)."""
    value = answer.headers.get("retry-after", "").strip()
    if value.isdigit():
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


def _unreadable(base: object, answers: list[httpx.Response], exc: Exception) -> ApiError:
    """The error of an answer the SDK could not parse."""
    if answers and not answers[-1].is_success:
        raw = answers[-1]
        line = problem_line(raw.status_code, raw.read(), raw.reason_phrase)
        return ApiError(line, raw.status_code, _raw_type(raw.content))
    return ApiError(f"{base} answered what the SDK cannot read ({type(exc).__name__}: {exc})")


def _raw_type(content: bytes) -> str:
    try:
        body = json.loads(content)
    except ValueError:
        return ""
    kind = body.get("type") if isinstance(body, dict) else None
    return kind if isinstance(kind, str) else ""


def pages(
    operation: Callable[..., Response[Any]], api_client: AuthenticatedClient, **kwargs: Any
) -> Iterator[Any]:
    """Every item of a paginated list operation, following ``next_cursor`` (at most
    ``MAX_PAGES`` pages of ``PAGE_SIZE``)."""
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        extra = {"cursor": cursor} if cursor else {}
        page = call(operation, api_client, limit=PAGE_SIZE, **kwargs, **extra)
        yield from page.items
        cursor = page.next_cursor if isinstance(page.next_cursor, str) else None
        if not cursor:
            return


def usable_key(key: str) -> bool:
    """Whether the gateway takes ``key`` as an Idempotency-Key."""
    return _KEY.fullmatch(key) is not None


def write_key(*parts: str) -> str:
    """The Idempotency-Key of a write: derived from ``parts`` when they name the write for
    good (stopping lease X is one act however often it is retried), else a fresh UUID (a new
    order each time the command runs; its own retries reuse it)."""
    if parts:
        derived = "-".join(parts)
        if usable_key(derived):
            return derived
    return str(uuid.uuid4())
