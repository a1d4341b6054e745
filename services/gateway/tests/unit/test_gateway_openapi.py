"""The gateway's OpenAPI document is good to generate a client from: each operation lists the
errors it can answer and no others, each a problem with its own reason."""

from __future__ import annotations

from http import HTTPStatus
from typing import Any

import pytest

from gpux_gateway.entrypoints import problems
from gpux_gateway.entrypoints.write_door import is_write
from gpux_platform.openapi import Operation
from gpux_platform.problems import PROBLEM_MEDIA_TYPE

from ..openapi_document import document, operations

pytestmark = pytest.mark.unit

PROBLEM = {PROBLEM_MEDIA_TYPE: {"schema": {"$ref": "#/components/schemas/Problem"}}}


def errors(method: str, path: str) -> dict[str, Any]:
    """The operation's own error answers: every one but the 500 that any operation may give
    (``test_every_operation_may_fail_unexpectedly``)."""
    responses = document()["paths"][path][method.lower()]["responses"]
    return {s: answer for s, answer in responses.items() if s >= "400" and s != "500"}


def test_every_operation_may_fail_unexpectedly() -> None:
    operations = [op for item in document()["paths"].values() for op in item.values()]
    assert operations
    for operation in operations:
        assert "500" in operation["responses"], operation["operationId"]


def test_public_reads_ask_for_no_key() -> None:
    assert set(errors("GET", "/v1/gpus")) == {"422", "429", "503"}
    assert set(errors("GET", "/v1/models")) == {"429", "503"}
    assert set(errors("GET", "/v1/prices/{gpu}")) == {"404", "422", "429"}


def test_placing_an_order_lists_what_placing_can_answer() -> None:
    placed = errors("POST", "/v1/orders")
    assert set(placed) == {"400", "401", "403", "413", "415", "422", "429", "503"}
    # Reusing an Idempotency-Key with another body is a 422 (the IETF draft's), not a 409.
    assert "Idempotency-Key" in placed["422"]["description"]
    assert "takes no new writes" in placed["503"]["description"]
    assert set(errors("DELETE", "/v1/orders/{order_id}")) == {
        "401",
        "403",
        "404",
        "409",
        "422",
        "429",
        "503",
    }


def test_every_error_is_a_problem_with_a_reason_of_its_own() -> None:
    for method, path, _ in operations():
        for status, answer in errors(method, path).items():
            assert answer["content"] == PROBLEM, (method, path, status)
            generic = {HTTPStatus(int(status)).phrase, "Validation Error", ""}
            assert answer["description"] not in generic, (method, path, status)
    assert "HTTPValidationError" not in document()["components"]["schemas"]


def test_only_an_operation_with_inputs_lists_a_422() -> None:
    assert set(errors("GET", "/v1/accounts/me/balances")) == {"401", "403", "429"}
    assert set(errors("GET", "/healthz")) == set()
    for method, path, operation in operations():
        inputs = bool(operation.get("parameters")) or "requestBody" in operation
        assert ("422" in errors(method, path)) == inputs, (method, path)


def test_only_an_operation_with_a_body_lists_413_and_415() -> None:
    for method, path, operation in operations():
        listed = errors(method, path)
        body = "requestBody" in operation
        assert ("413" in listed, "415" in listed) == (body, body), (method, path)


def test_exactly_the_operations_that_authenticate_list_401_403_and_the_keys_429() -> None:
    for method, path, operation in operations():
        listed = errors(method, path)
        if "security" in operation:
            assert {"401", "403", "429"} <= set(listed), (method, path)
            assert "GPUX_RATE_LIMIT" in listed["429"]["description"], (method, path)
        elif path != "/v1/sessions":  # signing in refuses a bad key with 401
            assert not {"401", "403"} & set(listed), (method, path)
    admin = errors("POST", "/v1/admin/fx-rates")["403"]["description"]
    assert admin.startswith("Not the admin key")
    csrf = "X-CSRF-Token"
    assert csrf in errors("POST", "/v1/topups")["403"]["description"]
    assert csrf not in errors("GET", "/v1/leases")["403"]["description"]


def test_an_operation_on_a_resource_lists_its_404() -> None:
    for method, path, _ in operations():
        addresses = "{" in path and path != "/v1/admin/topups/{topup_id}/confirm"
        assert ("404" in errors(method, path)) == addresses, (method, path)
    interruption = errors("GET", "/v1/leases/{lease_id}/interruption")["404"]["description"]
    assert "/problems/no-interruption" in interruption
    assert "No lease with this id" in interruption


def test_the_writes_behind_the_door_list_its_503() -> None:
    for method, path, _ in operations():
        if is_write(method, path):
            assert "takes no new writes" in errors(method, path)["503"]["description"]
    assert "503" not in errors("POST", "/v1/topups")


def test_every_answer_documents_its_request_id() -> None:
    header = {"$ref": "#/components/headers/X-Request-Id"}
    for method, path, operation in operations():
        for status, answer in operation["responses"].items():
            assert answer["headers"]["X-Request-Id"] == header, (method, path, status)


def test_a_path_parameter_whose_404_is_not_said_is_refused() -> None:
    operation = Operation("GET", "/v1/things/{thing_id}", ("thing_id",), False, frozenset())
    with pytest.raises(LookupError, match="thing_id"):
        list(problems.addressed(operation))
