"""Typed field readers for data tables parsed from TOML (pure: they take plain mappings)."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping
from typing import Any

from gpux_estimator.errors import CatalogDataError

SLUG = re.compile(r"^[a-z0-9]+(?:[.-][a-z0-9]+)*$")


def table(data: Mapping[str, Any], key: str, where: str) -> Mapping[str, Any]:
    """Return the sub-table ``key`` or raise a CatalogDataError naming ``where``."""
    value = data.get(key)
    if not isinstance(value, Mapping):
        raise CatalogDataError(f"{where}: missing table [{key}]")
    return value


def versioned_rows(
    data: Mapping[str, Any], key: str, file: str, *, items: str
) -> tuple[int, Iterator[tuple[str, Mapping[str, Any]]]]:
    """A data file's ``version`` and its ``[<key>.<id>]`` tables, (id, row) in file order; a
    CatalogDataError naming ``file`` when it has no ``items``, or (as it comes) a row that is
    not a table."""
    version = integer(data, "version", file)
    rows = table(data, key, file)
    if not rows:
        raise CatalogDataError(f"{file}: no {items}")

    def checked() -> Iterator[tuple[str, Mapping[str, Any]]]:
        for item_id, row in rows.items():
            if not isinstance(row, Mapping):
                raise CatalogDataError(f"{file}: [{key}.{item_id}] must be a table")
            yield item_id, row

    return version, checked()


def slug(value: object, where: str) -> str:
    """An id such as ``rtx-4090`` or ``llama-3.1-8b``."""
    if not isinstance(value, str) or not SLUG.match(value):
        raise CatalogDataError(f"{where}: id {value!r} is not a lower-case slug")
    return value


def text(row: Mapping[str, Any], key: str, where: str) -> str:
    """A required, non-blank string field."""
    value = row.get(key)
    if not isinstance(value, str) or not value.strip():
        raise CatalogDataError(f"{where}: field {key!r} must be a non-empty string")
    return value.strip()


def integer(row: Mapping[str, Any], key: str, where: str, *, minimum: int = 1) -> int:
    """A required integer field of at least ``minimum`` (booleans are refused)."""
    value = row.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise CatalogDataError(f"{where}: field {key!r} must be an integer >= {minimum}")
    return value


def optional_integer(row: Mapping[str, Any], key: str, where: str, default: int) -> int:
    """An integer field that may be absent."""
    return default if key not in row else integer(row, key, where)


def number(row: Mapping[str, Any], key: str, where: str) -> float:
    """A required, finite, strictly positive number (TOML int or float)."""
    value = row.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise CatalogDataError(f"{where}: field {key!r} must be a number")
    result = float(value)
    if not math.isfinite(result) or result <= 0:
        raise CatalogDataError(f"{where}: field {key!r} must be finite and > 0")
    return result


def optional_number(row: Mapping[str, Any], key: str, where: str) -> float | None:
    """A positive number that may be absent (e.g. FP8 on chips without FP8 tensor cores)."""
    return None if key not in row else number(row, key, where)


def flag(row: Mapping[str, Any], key: str, where: str, default: bool) -> bool:
    """A boolean field that may be absent."""
    value = row.get(key, default)
    if not isinstance(value, bool):
        raise CatalogDataError(f"{where}: field {key!r} must be true or false")
    return value
