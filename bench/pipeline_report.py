"""Figures and tables of the pipeline benchmark: percentiles in ms, plain-text tables."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any


def percentiles(seconds: Iterable[float]) -> dict[str, float | int | None]:
    """n, p50, p90, p99 and max in ms (nearest rank); None when there are no values."""
    ordered = sorted(seconds)
    n = len(ordered)
    if not n:
        return {"n": 0, "p50_ms": None, "p90_ms": None, "p99_ms": None, "max_ms": None}

    def rank(q: float) -> float:
        return round(1000 * ordered[min(n - 1, max(0, int(q * n + 0.999999) - 1))], 1)

    return {
        "n": n,
        "p50_ms": rank(0.50),
        "p90_ms": rank(0.90),
        "p99_ms": rank(0.99),
        "max_ms": round(1000 * ordered[-1], 1),
    }


def ms(value: Any) -> str:
    """A figure in ms for a table cell."""
    return "-" if value is None else f"{value:,.1f}"


def number(value: Any) -> str:
    """A count or rate for a table cell."""
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:,.1f}"
    return f"{value:,}" if isinstance(value, int) else str(value)


def table(title: str, headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A plain-text table with a title line; numbers right-aligned."""
    cells = [[c if isinstance(c, str) else number(c) for c in row] for row in rows]
    widths = [len(h) for h in headers]
    for row in cells:
        widths = [max(w, len(c)) for w, c in zip(widths, row, strict=False)]
    line = "  ".join("-" * w for w in widths)
    out = [f"\n== {title}", "  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True))]
    out.append(line)
    for row in cells:
        # The first column names the row; the others are figures.
        out.append(
            "  ".join(
                c.ljust(w) if i == 0 else c.rjust(w)
                for i, (c, w) in enumerate(zip(row, widths, strict=False))
            )
        )
    return "\n".join(out)


def latency_row(label: str, figures: Mapping[str, Any]) -> list[Any]:
    """label, n, p50, p90, p99, max."""
    return [
        label,
        figures.get("n", 0),
        ms(figures.get("p50_ms")),
        ms(figures.get("p90_ms")),
        ms(figures.get("p99_ms")),
        ms(figures.get("max_ms")),
    ]


LATENCY_HEADERS = ("", "n", "p50 ms", "p90 ms", "p99 ms", "max ms")


def counts(values: Mapping[str, int]) -> str:
    """``202: 10, 429: 3`` for a table cell."""
    return ", ".join(f"{k}: {v}" for k, v in sorted(values.items())) or "-"
