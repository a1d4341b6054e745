"""A small synchronous client of the gpux public API, for the CLI.

Every failure becomes an ``ApiError`` whose message is one line for people: the
problem document's status, title and detail, or why the API could not be reached.
"""

from __future__ import annotations

from typing import Any

import httpx

DEFAULT_API_URL = "http://127.0.0.1:8000"
API_URL_ENV = "GPUX_API_URL"


class ApiError(Exception):
    """A call that failed; the message is one line naming why."""


def problem_line(response: httpx.Response) -> str:
    """One line from an error response: `404 Not found: no GPU model 'x'`."""
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict) and isinstance(body.get("title"), str):
        detail = body.get("detail")
        suffix = f": {detail}" if isinstance(detail, str) and detail else ""
        return f"{response.status_code} {body['title']}{suffix}"
    return f"{response.status_code} {response.reason_phrase}"


class ApiClient:
    """The catalog endpoints of one gateway."""

    def __init__(
        self,
        base_url: str = DEFAULT_API_URL,
        *,
        transport: httpx.BaseTransport | None = None,
        timeout_s: float = 10.0,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self._http = httpx.Client(base_url=self.base_url, transport=transport, timeout=timeout_s)

    def __enter__(self) -> ApiClient:
        return self

    def __exit__(self, *_: object) -> None:
        self._http.close()

    def _call(self, method: str, path: str, **kwargs: Any) -> Any:
        try:
            response = self._http.request(method, path, **kwargs)
        except httpx.HTTPError as exc:
            raise ApiError(f"cannot reach the gpux API at {self.base_url} ({exc})") from None
        if not response.is_success:
            raise ApiError(problem_line(response))
        try:
            return response.json()
        except ValueError:
            raise ApiError(f"{self.base_url}{path} did not answer JSON") from None

    def gpus(self) -> list[dict[str, Any]]:
        """Every GPU model with specs and fit (GET /v1/gpus)."""
        items: list[dict[str, Any]] = self._call("GET", "/v1/gpus")["items"]
        return items

    def estimate(self, body: dict[str, Any]) -> dict[str, Any]:
        """A fine-tuning estimate (POST /v1/estimates)."""
        answer: dict[str, Any] = self._call("POST", "/v1/estimates", json=body)
        return answer
