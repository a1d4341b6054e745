"""Settings read from an environment given whole, as a process started with it would read
them."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TypeVar

import pytest

from gpux_platform.settings import GpuxSettings

S = TypeVar("S", bound=GpuxSettings)


def settings_from(
    settings_type: type[S], environment: Mapping[str, str], monkeypatch: pytest.MonkeyPatch
) -> S:
    """``settings_type`` read from exactly ``environment``: this process's other ``GPUX_``
    variables are removed while it reads, and everything is put back afterwards."""
    with monkeypatch.context() as patch:
        for variable in [v for v in os.environ if v.startswith("GPUX_")]:
            patch.delenv(variable)
        for variable, value in environment.items():
            patch.setenv(variable, value)
        return settings_type()
