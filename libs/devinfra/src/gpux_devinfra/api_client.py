"""A small synchronous client of the gpux public API, for the CLI.

Every failure becomes an ``ApiError`` whose message is one line for people: the
problem document's status, title and detail, or why the API could not be reached.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote

import httpx

DEFAULT_API_URL = "http://127.0.0.1:8000"
API_URL_ENV = "GPUX_API_URL"
API_KEY_ENV = "GPUX_API_KEY"
MAX_PAGES = 100
_KEY = re.compile(r"[\x21-\x7e]{1,255}")
"""What the gateway takes as an Idempotency-Key: 1 to 255 visible ASCII characters."""


class ApiError(Exception):
    """A call that failed; the message is one line naming why."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status
        """The HTTP status of the answer; None when the API did not answer."""


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
    """The catalog, market, order and wallet endpoints of one gateway."""

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

    def authorize(self, api_key: str) -> None:
        """Send `Authorization: Bearer <api_key>` with every later call."""
        self._http.headers["Authorization"] = f"Bearer {api_key}"

    def _call(self, method: str, path: str, **kwargs: Any) -> Any:
        try:
            response = self._http.request(method, path, **kwargs)
        except httpx.HTTPError as exc:
            raise ApiError(f"cannot reach the gpux API at {self.base_url} ({exc})") from None
        if not response.is_success:
            raise ApiError(problem_line(response), response.status_code)
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

    def _pages(self, path: str, query: dict[str, str] | None = None) -> list[dict[str, Any]]:
        """Every item of a paginated list, following `next_cursor`."""
        items: list[dict[str, Any]] = []
        params: dict[str, Any] = {**(query or {}), "limit": 100}
        for _ in range(MAX_PAGES):
            page = self._call("GET", path, params=params)
            items.extend(page["items"])
            cursor = page.get("next_cursor")
            if not cursor:
                break
            params = {**(query or {}), "limit": 100, "cursor": cursor}
        return items

    def prices(self, currency: str) -> list[dict[str, Any]]:
        """Every book's best ask, in `currency` (GET /v1/prices)."""
        items: list[dict[str, Any]] = self._call(
            "GET", "/v1/prices", params={"currency": currency}
        )["items"]
        return items

    def push_offer(
        self, body: dict[str, Any], idempotency_key: str | None = None
    ) -> dict[str, Any]:
        """Offer GPU-hours (POST /v1/offers)."""
        answer: dict[str, Any] = self._call(
            "POST", "/v1/offers", json=body, headers=_idempotent(idempotency_key)
        )
        return answer

    def offers(self) -> list[dict[str, Any]]:
        """The seller's offers, every page (GET /v1/offers)."""
        return self._pages("/v1/offers")

    def withdraw_offer(self, offer_id: str) -> dict[str, Any]:
        """Withdraw an offer (DELETE /v1/offers/{id})."""
        answer: dict[str, Any] = self._call("DELETE", f"/v1/offers/{quote(offer_id, safe='')}")
        return answer

    def place_order(self, body: dict[str, Any]) -> dict[str, Any]:
        """Order GPU-hours (POST /v1/orders)."""
        answer: dict[str, Any] = self._call("POST", "/v1/orders", json=body)
        return answer

    def orders(self) -> list[dict[str, Any]]:
        """The buyer's orders, every page (GET /v1/orders)."""
        return self._pages("/v1/orders")

    def balances(self) -> list[dict[str, Any]]:
        """The wallet per currency (GET /v1/accounts/me/balances)."""
        answer: list[dict[str, Any]] = self._call("GET", "/v1/accounts/me/balances")
        return answer

    def topup(self, body: dict[str, Any], idempotency_key: str | None = None) -> dict[str, Any]:
        """Ask for a top-up (POST /v1/topups)."""
        answer: dict[str, Any] = self._call(
            "POST", "/v1/topups", json=body, headers=_idempotent(idempotency_key)
        )
        return answer

    def sign_up(
        self, name: str, roles: list[str], idempotency_key: str | None = None
    ) -> dict[str, Any]:
        """A new account and its first API key, shown once (POST /v1/accounts)."""
        body = {"name": name, "roles": roles}
        answer: dict[str, Any] = self._call(
            "POST", "/v1/accounts", json=body, headers=_idempotent(idempotency_key)
        )
        return answer

    def me(self) -> dict[str, Any]:
        """The calling account (GET /v1/accounts/me)."""
        answer: dict[str, Any] = self._call("GET", "/v1/accounts/me")
        return answer

    def leases(self, status: str | None = None, role: str | None = None) -> list[dict[str, Any]]:
        """The caller's leases, every page (GET /v1/leases)."""
        query = {k: v for k, v in (("status", status), ("role", role)) if v}
        return self._pages("/v1/leases", query)

    def stop_lease(self, lease_id: str) -> dict[str, Any]:
        """Ask to stop a running lease (POST /v1/leases/{id}/stop), with an Idempotency-Key
        derived from the lease id: a retried stop is answered as the first one was."""
        answer: dict[str, Any] = self._call(
            "POST",
            f"/v1/leases/{quote(lease_id, safe='')}/stop",
            headers=_idempotent(stop_key(lease_id)),
        )
        return answer

    def reclaim_lease(self, lease_id: str) -> dict[str, Any]:
        """A seller takes an interruptible lease's GPUs back (POST /v1/leases/{id}/reclaim),
        with an Idempotency-Key derived from the lease id."""
        key = f"reclaim-{lease_id}"
        answer: dict[str, Any] = self._call(
            "POST",
            f"/v1/leases/{quote(lease_id, safe='')}/reclaim",
            headers=_idempotent(key if _KEY.fullmatch(key) else None),
        )
        return answer

    def interruption(self, lease_id: str) -> dict[str, Any] | None:
        """A lease's pending interruption (GET /v1/leases/{id}/interruption); None while none
        is pending (the endpoint's 404 of type ``no-interruption``)."""
        path = f"/v1/leases/{quote(lease_id, safe='')}/interruption"
        try:
            response = self._http.get(path)
        except httpx.HTTPError as exc:
            raise ApiError(f"cannot reach the gpux API at {self.base_url} ({exc})") from None
        if response.status_code == 404 and _problem_type(response).endswith("/no-interruption"):
            return None
        if not response.is_success:
            raise ApiError(problem_line(response), response.status_code)
        answer: dict[str, Any] = response.json()
        return answer

    def ledger(self, currency: str | None = None) -> list[dict[str, Any]]:
        """The caller's ledger entries, every page (GET /v1/ledger)."""
        return self._pages("/v1/ledger", {"currency": currency} if currency else {})

    def earnings(self) -> list[dict[str, Any]]:
        """A seller's earnings per currency (GET /v1/accounts/me/earnings)."""
        items: list[dict[str, Any]] = self._call("GET", "/v1/accounts/me/earnings")["items"]
        return items

    def request_payout(
        self, body: dict[str, Any], idempotency_key: str | None = None
    ) -> dict[str, Any]:
        """Ask for a payout of the seller's payable earnings (POST /v1/payouts)."""
        answer: dict[str, Any] = self._call(
            "POST", "/v1/payouts", json=body, headers=_idempotent(idempotency_key)
        )
        return answer

    def payouts(self) -> list[dict[str, Any]]:
        """Every payout of the seller, oldest first (GET /v1/payouts, all pages)."""
        return self._pages("/v1/payouts")


def _problem_type(response: httpx.Response) -> str:
    """The ``type`` of a problem+json answer ("" for anything else)."""
    try:
        body = response.json()
    except ValueError:
        return ""
    return str(body.get("type", "")) if isinstance(body, dict) else ""


def stop_key(lease_id: str) -> str | None:
    """The Idempotency-Key of stopping ``lease_id`` (None when the id cannot make a key: one
    the gateway would refuse anyway, as keys are 1 to 255 visible ASCII characters)."""
    key = f"stop-{lease_id}"
    return key if _KEY.fullmatch(key) else None


def _idempotent(key: str | None) -> dict[str, str]:
    return {"Idempotency-Key": key} if key else {}
