"""Request shapes every resource uses (strict: unknown fields are refused), and pages."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from typing import Annotated, Any, Generic, TypeVar

from fastapi import Path, Query
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    StringConstraints,
    WithJsonSchema,
)

from gpux_contracts.money import to_decimal
from gpux_platform.problems import PROBLEM_MEDIA_TYPE

Price = Annotated[
    Decimal,
    BeforeValidator(to_decimal),
    Field(gt=Decimal(0), lt=Decimal(100_000), decimal_places=4),
    PlainSerializer(lambda d: format(d, "f"), return_type=str, when_used="json"),
    WithJsonSchema(
        {
            "type": "string",
            "pattern": (
                r"^([1-9][0-9]{0,4}(\.[0-9]{1,4})?"
                r"|0\.([1-9][0-9]{0,3}|0[1-9][0-9]{0,2}|00[1-9][0-9]?|000[1-9]))$"
            ),
            "examples": ["0.33", "2.8800"],
        }
    ),
]
"""A positive price per GPU-hour: a decimal string, at most 4 decimals, below 100000."""

CreditAmount = Annotated[
    Decimal,
    BeforeValidator(to_decimal),
    Field(gt=Decimal(0), lt=Decimal(1_000_000), decimal_places=2),
    PlainSerializer(lambda d: format(d, "f"), return_type=str, when_used="json"),
    WithJsonSchema(
        {
            "type": "string",
            "pattern": r"^([1-9][0-9]{0,5}(\.[0-9]{1,2})?|0\.([1-9][0-9]?|0[1-9]))$",
            "examples": ["25.00"],
        }
    ),
]
"""A positive amount with at most 2 decimals, below one million."""

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

Slug = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9-]{0,39}$")]
Region = Annotated[str, StringConstraints(pattern=r"^[a-z]{2}(-[a-z0-9]{1,20}){0,2}$")]
GpuId = Annotated[str, Path(pattern=r"^[a-z0-9][a-z0-9.-]{0,63}$")]
"""A GPU model id in a path."""


class Strict(BaseModel):
    """Requests refuse fields they do not know."""

    model_config = ConfigDict(extra="forbid")


T = TypeVar("T")
R = TypeVar("R")


class Page(BaseModel, Generic[T]):
    """One page of a list; pass `next_cursor` as `cursor` for the next."""

    items: list[T]
    next_cursor: str | None


def split_page(rows: Sequence[R], limit: int) -> tuple[Sequence[R], bool]:
    """The rows of a page read as ``limit + 1`` rows, and whether a next page follows."""
    return rows[:limit], len(rows) > limit


def problem_responses(*answers: tuple[int, str]) -> dict[int | str, dict[str, Any]]:
    """OpenAPI ``responses`` documenting problem answers beyond the usual ones."""
    return {
        status: {
            "description": description,
            "content": {PROBLEM_MEDIA_TYPE: {"schema": {"$ref": "#/components/schemas/Problem"}}},
        }
        for status, description in answers
    }
