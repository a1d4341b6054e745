"""The manifests' tests are offline (unit), but for the ones marked integration: those wire a
service against the session's infrastructure to see what it consumes."""

from __future__ import annotations

from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark this folder's tests unit unless they are marked integration."""
    for item in items:
        if item.path.is_relative_to(HERE) and item.get_closest_marker("integration") is None:
            item.add_marker(pytest.mark.unit)
