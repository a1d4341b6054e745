"""sdk_client: one-line errors whatever the gateway (or a proxy before it) answered, pages
followed to the end, the Idempotency-Key of a write, and the tries again of a request that
may be sent again (a GET, a write with its key) after a failure of the moment."""

from __future__ import annotations

import uuid

import httpx
import pytest

from gpux_devinfra import sdk_client
from gpux_devinfra.sdk_client import ApiError, account_client, call, pages, write_key
from gpux_devinfra.testing.cli import problem, use_transport
from gpux_devinfra.testing.market import OFFER, ORDER
from gpux_sdk.api.accounts import get_me, revoke_api_key
from gpux_sdk.api.offers import list_offers
from gpux_sdk.api.orders import place_order
from gpux_sdk.models.order_in import OrderIn

pytestmark = pytest.mark.unit

URL = "http://gw.test"


def me_answered(monkeypatch: pytest.MonkeyPatch, response: httpx.Response) -> ApiError:
    use_transport(monkeypatch, lambda _: response)
    with pytest.raises(ApiError) as raised, account_client(URL, "gpx_k") as client:
        call(get_me.sync_detailed, client)
    return raised.value


def test_a_problem_is_its_status_title_and_detail(monkeypatch: pytest.MonkeyPatch) -> None:
    body = problem(403, "Forbidden", "the key lacks read", "insufficient-scope")
    error = me_answered(monkeypatch, httpx.Response(403, json=body))
    assert (str(error), error.status) == ("403 Forbidden: the key lacks read", 403)
    assert error.kind.endswith("/insufficient-scope")


def test_an_error_that_is_no_problem_document_is_its_status(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    error = me_answered(monkeypatch, httpx.Response(502, text="<html>bad gateway</html>"))
    assert (str(error), error.status, error.kind) == ("502 Bad Gateway", 502, "")
    untyped = me_answered(monkeypatch, httpx.Response(409, json={"title": "Conflict"}))
    assert str(untyped) == "409 Conflict"


def test_a_success_the_sdk_cannot_read_is_an_error_too(monkeypatch: pytest.MonkeyPatch) -> None:
    error = me_answered(monkeypatch, httpx.Response(200, json={"id": "01ACC"}))
    assert str(error).startswith(f"{URL} answered what the SDK cannot read (KeyError")
    assert error.status is None


def test_an_unreachable_gateway_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    def refused(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    use_transport(monkeypatch, refused)
    reached = pytest.raises(ApiError, match=f"cannot reach the gpux API at {URL}")
    with reached, account_client(URL, "gpx_k") as client:
        call(get_me.sync_detailed, client)


def test_pages_follow_the_cursor_to_the_end(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[httpx.URL] = []

    def offers(request: httpx.Request) -> httpx.Response:
        seen.append(request.url)
        cursor = request.url.params.get("cursor")
        following = {None: "c1", "c1": "c2", "c2": None}[cursor]
        item = {**OFFER, "id": f"offer-{cursor}"}
        return httpx.Response(200, json={"items": [item], "next_cursor": following})

    use_transport(monkeypatch, offers)
    with account_client(URL, "gpx_k") as client:
        ids = [o.id for o in pages(list_offers.sync_detailed, client)]
    assert ids == ["offer-None", "offer-c1", "offer-c2"]
    assert [u.params["limit"] for u in seen] == [str(sdk_client.PAGE_SIZE)] * 3


def test_a_write_key_is_derived_when_it_can_be_else_fresh() -> None:
    assert write_key("stop", "01LEASE") == "stop-01LEASE"
    fresh = {write_key() for _ in range(3)} | {write_key("stop", "01 LEASE")}
    assert len(fresh) == 4
    assert all(uuid.UUID(key) for key in fresh)
    assert write_key("x" * 300) != "x" * 300


ACCOUNT = {
    "id": "01ACC",
    "name": "Acme",
    "roles": ["buyer"],
    "status": "active",
    "created_at": "2025-01-01T00:00:00Z",
}
BODY = OrderIn.from_dict(
    {"gpu": "rtx-4090", "gpus": 2, "currency": "USD", "type": "limit"}
    | {"max_price_per_gpu_hour": "0.45", "tier": "any"}
)


class Answers:
    """Answers each request with the next of ``steps`` (an exception is raised instead)."""

    def __init__(self, *steps: httpx.Response | type[httpx.TransportError]) -> None:
        self.steps = list(steps)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        step = self.steps[min(len(self.requests), len(self.steps)) - 1]
        if isinstance(step, httpx.Response):
            return step
        raise step("failed", request=request)


def unavailable(status: int = 503, **headers: str) -> httpx.Response:
    body = {"title": "Unavailable", "status": status, "detail": "try again"}
    return httpx.Response(status, json=body, headers=headers)


def test_a_get_is_tried_again_after_a_failed_connection_and_a_busy_answer(
    monkeypatch: pytest.MonkeyPatch, pauses: list[float]
) -> None:
    answers = Answers(
        httpx.ConnectError,
        unavailable(429, **{"Retry-After": "2"}),
        httpx.Response(200, json=ACCOUNT),
    )
    use_transport(monkeypatch, answers)
    with account_client(URL, "gpx_k") as client:
        assert call(get_me.sync_detailed, client).id == "01ACC"
    assert len(answers.requests) == 3
    assert len(pauses) == 2
    assert 0 < pauses[0] <= sdk_client.BACKOFF_S
    assert pauses[1] == 2.0  # as Retry-After asked


def test_a_keyed_write_is_sent_again_with_the_same_key(monkeypatch: pytest.MonkeyPatch) -> None:
    answers = Answers(
        httpx.Response(502, text="<html>bad gateway</html>"),
        httpx.ReadTimeout,
        unavailable(504),
        httpx.Response(202, json=ORDER),
    )
    use_transport(monkeypatch, answers)
    with account_client(URL, "gpx_k") as client:
        order = call(place_order.sync_detailed, client, body=BODY, idempotency_key="k-1")
    assert order.id == ORDER["id"]
    assert [r.headers["idempotency-key"] for r in answers.requests] == ["k-1"] * 4


def test_a_request_neither_get_nor_keyed_is_sent_once(
    monkeypatch: pytest.MonkeyPatch, pauses: list[float]
) -> None:
    answers = Answers(httpx.ReadTimeout)
    use_transport(monkeypatch, answers)
    with pytest.raises(ApiError) as raised, account_client(URL, "gpx_k") as client:
        call(revoke_api_key.sync_detailed, client, key_id="01KEY")
    assert (len(answers.requests), pauses) == (1, [])
    assert raised.value.idempotency_key is None


def test_retries_are_bounded_and_the_last_error_names_the_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    answers = Answers(httpx.ReadTimeout)
    use_transport(monkeypatch, answers)
    with pytest.raises(ApiError) as raised, account_client(URL, "gpx_k") as client:
        call(place_order.sync_detailed, client, body=BODY, idempotency_key="k-2")
    assert len(answers.requests) == sdk_client.MAX_ATTEMPTS
    assert str(raised.value).startswith(f"cannot reach the gpux API at {URL} (")
    assert (raised.value.status, raised.value.idempotency_key) == (None, "k-2")


def test_a_retry_after_beyond_the_retries_time_is_not_waited_for(
    monkeypatch: pytest.MonkeyPatch, pauses: list[float]
) -> None:
    answers = Answers(unavailable(503, **{"Retry-After": "3600"}))
    use_transport(monkeypatch, answers)
    with pytest.raises(ApiError) as raised, account_client(URL, "gpx_k") as client:
        call(get_me.sync_detailed, client)
    assert (len(answers.requests), pauses) == (1, [])
    assert (str(raised.value), raised.value.status) == ("503 Unavailable: try again", 503)


def test_an_error_that_trying_again_would_not_mend_is_sent_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    body = problem(409, "Conflict", "the key was used for another order", "idempotency-conflict")
    answers = Answers(httpx.Response(409, json=body))
    use_transport(monkeypatch, answers)
    with pytest.raises(ApiError) as raised, account_client(URL, "gpx_k") as client:
        call(place_order.sync_detailed, client, body=BODY, idempotency_key="k-3")
    assert len(answers.requests) == 1
    assert raised.value.idempotency_key is None


def test_retry_after_reads_seconds_and_http_dates() -> None:
    assert sdk_client.retry_after(httpx.Response(429, headers={"Retry-After": "7"})) == 7.0
    past = httpx.Response(503, headers={"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"})
    assert sdk_client.retry_after(past) == 0.0
    assert sdk_client.retry_after(httpx.Response(503, headers={"Retry-After": "soon"})) is None
    assert sdk_client.retry_after(httpx.Response(503)) is None
