"""Every test of the CLI runs without the developer's profiles or GPUX_API_* variables, and
``sdk_client``'s retries wait no real time."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpux_devinfra import sdk_client
from gpux_devinfra.testing.cli import isolate_profiles


@pytest.fixture(autouse=True)
def config_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Where this test's profiles are kept (``$XDG_CONFIG_HOME`` in a fresh directory)."""
    return isolate_profiles(monkeypatch, tmp_path / "config")


@pytest.fixture(autouse=True)
def pauses(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The waits ``sdk_client`` asked for between tries of a request (none taken)."""
    asked: list[float] = []
    monkeypatch.setattr(sdk_client, "pause", asked.append)
    return asked
