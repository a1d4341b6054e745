"""Request shapes every resource uses (strict: unknown fields are refused), pages, stored rows
as responses, and the examples the OpenAPI document shows of each body."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence
from decimal import Decimal
from typing import TYPE_CHECKING, Annotated, Any, Generic, Protocol, TypeVar

from fastapi import Depends, Path, Query
from fastapi.exceptions import RequestValidationError
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StringConstraints,
    WithJsonSchema,
)
from pydantic_core import PydanticCustomError

from gpux_contracts.money import DecimalAmount, canonical, from_micros
from gpux_platform.problems import PROBLEM_MEDIA_TYPE

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

PRICE_PATTERN = (
    r"^([1-9][0-9]{0,4}(\.[0-9]{1,4})?"
    r"|0\.([1-9][0-9]{0,3}|0[1-9][0-9]{0,2}|00[1-9][0-9]?|000[1-9]))$"
)
"""A price as the OpenAPI document publishes it: plain digits, at most 4 decimals."""
CREDIT_PATTERN = r"^([1-9][0-9]{0,5}(\.[0-9]{1,2})?|0\.([1-9][0-9]?|0[1-9]))$"
"""A credit amount as published: plain digits, at most 2 decimals."""


def _written_as(pattern: str) -> BeforeValidator:
    """Refuse a decimal string the published pattern does not allow (``1e3``, `` 1``, ``+1``);
    the contracts' DecimalAmount alone reads any form ``Decimal`` reads."""
    compiled = re.compile(pattern)

    def check(value: Any) -> Any:
        if isinstance(value, str) and not compiled.match(value):
            raise PydanticCustomError(
                "string_pattern_mismatch",
                "String should match pattern '{pattern}'",
                {"pattern": pattern},
            )
        return value

    return BeforeValidator(check)


# Both are the contracts' DecimalAmount (read from strings and ints, written as a plain decimal
# string) with bounds; the pattern says the same bounds in the OpenAPI document, and strings
# are checked against it.
Price = Annotated[
    DecimalAmount,
    Field(gt=Decimal(0), lt=Decimal(100_000), decimal_places=4),
    _written_as(PRICE_PATTERN),
    WithJsonSchema({"type": "string", "pattern": PRICE_PATTERN, "examples": ["0.33", "2.8800"]}),
]
"""A positive price per GPU-hour: a decimal string, at most 4 decimals, below 100000."""

CreditAmount = Annotated[
    DecimalAmount,
    Field(gt=Decimal(0), lt=Decimal(1_000_000), decimal_places=2),
    _written_as(CREDIT_PATTERN),
    WithJsonSchema({"type": "string", "pattern": CREDIT_PATTERN, "examples": ["25.00"]}),
]
"""A positive amount with at most 2 decimals, below one million."""


def field_error(loc: Sequence[str | int], message: str) -> RequestValidationError:
    """A 422 for a rule no schema can state (a deadline, a catalog id), answered like the
    schema's own: a problem with ``errors[]`` naming the field."""
    return RequestValidationError([{"loc": tuple(loc), "msg": message, "type": "value_error"}])


# PostgreSQL text cannot hold NUL, and control characters have no place in names.
PRINTABLE = r"^[^\x00-\x1f\x7f]+$"
Name = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=100, pattern=PRINTABLE),
]
ResourceId = Annotated[
    str, Path(pattern=r"^[0-9A-Za-z_-]{1,64}$", description="A resource id (a ULID).")
]
"""An id in a path: anything else is a 422 before it reaches a query."""

Cursor = Annotated[
    str | None,
    Query(pattern=r"^[0-9A-Za-z_-]{1,64}$", description="`next_cursor` of the previous page."),
]
"""A pagination cursor."""


@dataclasses.dataclass(frozen=True, slots=True)
class PageQuery:
    """Which page of a list a request asks for: at most ``limit`` items, after ``cursor``."""

    limit: int
    cursor: str | None


async def page_query(
    limit: Annotated[int, Query(ge=1, le=100)] = 50, cursor: Cursor = None
) -> PageQuery:
    """The ``limit`` and ``cursor`` query parameters of a list route (async: FastAPI runs a
    plain def, or a class, in a worker thread)."""
    return PageQuery(limit, cursor)


PageQueryDep = Annotated[PageQuery, Depends(page_query)]
"""For a list route's parameters: ``?limit=`` (1 to 100, 50 by default) and ``?cursor=``."""

Slug = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9-]{0,39}$")]
Region = Annotated[str, StringConstraints(pattern=r"^[a-z]{2}(-[a-z0-9]{1,20}){0,2}$")]
GpuId = Annotated[str, Path(pattern=r"^[a-z0-9][a-z0-9.-]{0,63}$")]
"""A GPU model id in a path."""


class Strict(BaseModel):
    """Requests refuse fields they do not know."""

    model_config = ConfigDict(extra="forbid")


T = TypeVar("T")
R = TypeVar("R")
M = TypeVar("M", bound=BaseModel)


def examples(*shown: dict[str, Any]) -> ConfigDict:
    """The ``model_config`` of a body with the examples its OpenAPI schema shows: real ones,
    each checked against the model by the gateway's tests (a stale example fails them)."""
    return ConfigDict(json_schema_extra={"examples": list(shown)})


def examples_of(model: object) -> list[dict[str, Any]]:
    """The examples a model was given (``examples``); none for anything else."""
    config = getattr(model, "model_config", {})
    extra = config.get("json_schema_extra") if isinstance(config, dict) else None
    return list(extra.get("examples", [])) if isinstance(extra, dict) else []


def listing(item: type[BaseModel], **beside: Any) -> ConfigDict:
    """The ``model_config`` of a list envelope: ``{"items": [...]}`` of the item's examples
    (and ``beside`` them, the envelope's other fields)."""
    return examples({**beside, "items": examples_of(item)})


def _page_examples(schema: dict[str, Any], model: type[BaseModel]) -> None:
    """A page of the item's examples, the last page (``Page[OfferOut]``: OfferOut's)."""
    item = model.__pydantic_generic_metadata__["args"]
    shown = examples_of(item[0]) if item else []
    if shown:
        schema["examples"] = [{"items": shown, "next_cursor": None}]


class Page(BaseModel, Generic[T]):
    """One page of a list; pass `next_cursor` as `cursor` for the next."""

    model_config = ConfigDict(json_schema_extra=_page_examples)

    items: list[T]
    next_cursor: str | None


def split_page(rows: Sequence[R], limit: int) -> tuple[Sequence[R], bool]:
    """The rows of a page read as ``limit + 1`` rows, and whether a next page follows."""
    return rows[:limit], len(rows) > limit


class Identified(Protocol):
    """A stored row with an id, the cursor of the pages it is listed in."""

    @property
    def id(self) -> str:
        """The row's id."""
        ...


RowT = TypeVar("RowT", bound=Identified)


def id_page(rows: Sequence[RowT], limit: int, out: Callable[[RowT], T]) -> Page[T]:
    """The page of ``rows`` read as ``limit + 1`` in id order, each shown by ``out``; the next
    page starts after the last row's id."""
    shown, more = split_page(rows, limit)
    return Page[T](items=[out(r) for r in shown], next_cursor=shown[-1].id if more else None)


def amount(micros: int) -> Decimal:
    """Stored micro-units as a response shows them (``money.canonical``: 0.33, 1.2345)."""
    return canonical(from_micros(micros))


def from_row(model: type[M], row: DataclassInstance, **shown: Any) -> M:
    """A stored row as the response ``model``: every field the row stores under the model's
    name, as stored, and ``shown`` for the others (money in micro-units, renamed fields)."""
    stored = {field.name: getattr(row, field.name) for field in dataclasses.fields(row)}
    return model.model_validate({**stored, **shown})


def problem_responses(*answers: tuple[int, str]) -> dict[int | str, dict[str, Any]]:
    """OpenAPI ``responses`` documenting problem answers beyond the usual ones."""
    return {
        status: {
            "description": description,
            "content": {PROBLEM_MEDIA_TYPE: {"schema": {"$ref": "#/components/schemas/Problem"}}},
        }
        for status, description in answers
    }
