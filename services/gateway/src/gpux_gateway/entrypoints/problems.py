"""Which problems each gateway operation can answer, read from its route for the OpenAPI
document (``SPEC.problems``; the platform adds those of its inputs and body).

Each rule follows one piece of the gateway that refuses requests: authentication and the
rate limits (the route's dependencies), the Idempotency-Key, the body size limit, the door
of writes (method and path) and the resources a path addresses (its parameters). A route
declares what only its own code knows (a state conflict, a missing view) with
``schemas.problem_responses``; both end up in its document.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpux_gateway.entrypoints.dependencies import OVERLOADED, anonymous_limit, current_principal
from gpux_gateway.entrypoints.idempotency import idempotency
from gpux_gateway.entrypoints.write_door import READS, is_write
from gpux_platform.openapi import Answer, Operation, ProblemRule

UNAUTHORIZED = (
    "No API key (`Authorization: Bearer gpx_…`) or session cookie, or not a valid one"
    " (`WWW-Authenticate: Bearer`)"
)
FORBIDDEN = (
    "The key lacks the scope, or its account the role, this operation needs"
    " (`/problems/scope-required`, `/problems/role-required`), the account is suspended"
    " (`/problems/account-suspended`), or it is the admin key"
)
CSRF = (
    "A write made with the session cookie did not send its CSRF token as `X-CSRF-Token`"
    " (`/problems/csrf-failed`)"
)
ADMIN_ONLY = "Not the admin key (`/problems/admin-required`)"
KEY_LIMIT = (
    "The key's rate limit (`GPUX_RATE_LIMIT`) is spent: retry after `Retry-After` seconds"
    " (`RateLimit-*` say how it stands)"
)
ADDRESS_LIMIT = (
    "The client address's rate limit (`GPUX_ANONYMOUS_RATE_LIMIT`) is spent: retry after"
    " `Retry-After` seconds"
)
KEY_REUSED = (
    "The `Idempotency-Key` was used with a different request (`/problems/idempotency-key-reused`)"
)
TOO_LARGE = "The body is over the gateway's limit (`GPUX_MAX_BODY_BYTES`, 1 MiB by default)"

NOT_FOUND: dict[str, str | None] = {
    "account_id": "No account with this id",
    "session_id": "None of the account's live sessions has this id",
    "key_id": "None of the account's keys has this id",
    "offer_id": "None of the seller's offers has this id",
    "order_id": "None of the buyer's orders has this id",
    "lease_id": "No lease with this id that the account rents or provides",
    "payout_id": "No payout with this id (of the seller's own, for a seller)",
    "endpoint_id": "None of the account's webhook endpoints has this id",
    "delivery_id": "The endpoint made no delivery with this id",
    "gpu_id": "No GPU model with this id in the catalog",
    "gpu": "No GPU model with this id in the catalog",
    # Billing applies the confirmation of a top-up it has not read yet once it arrives.
    "topup_id": None,
}
"""The 404 of each path parameter: what is missing when it is answered (another account's
resource is answered the same, so ids do not leak), or None where an unknown id is no error."""


def access(operation: Operation) -> Iterator[Answer]:
    """Who is calling: a key or a session (401, 403, the key's 429), or anyone, counted per
    client address (429)."""
    if current_principal in operation.calls:
        yield 401, UNAUTHORIZED
        yield 403, ADMIN_ONLY if operation.path.startswith("/v1/admin/") else FORBIDDEN
        if operation.method not in READS:
            yield 403, CSRF
        yield 429, KEY_LIMIT
    if anonymous_limit in operation.calls:
        yield 429, ADDRESS_LIMIT


def idempotent(operation: Operation) -> Iterator[Answer]:
    """The Idempotency-Key of a creating request, reused with another body (422)."""
    if idempotency in operation.calls:
        yield 422, KEY_REUSED


def body_limit(operation: Operation) -> Iterator[Answer]:
    """A body over the limit (``http.BodyLimitMiddleware``, 413)."""
    if operation.has_body:
        yield 413, TOO_LARGE


def write_door(operation: Operation) -> Iterator[Answer]:
    """A write of orders or offers refused for overload (``write_door.WriteDoor``, 503)."""
    if is_write(operation.method, operation.path):
        yield 503, str(OVERLOADED[503]["description"])


def addressed(operation: Operation) -> Iterator[Answer]:
    """The resources a path names (404); a parameter ``NOT_FOUND`` does not know is an error,
    so a new route says what its parameter's 404 means."""
    for name in operation.path_params:
        if name not in NOT_FOUND:
            raise LookupError(f"{operation.path}: say in NOT_FOUND what {name}'s 404 means")
        missing = NOT_FOUND[name]
        if missing is not None:
            yield 404, missing


RULES: tuple[ProblemRule, ...] = (access, idempotent, body_limit, write_door, addressed)
"""The gateway's rules (``ServiceSpec.problems``)."""
