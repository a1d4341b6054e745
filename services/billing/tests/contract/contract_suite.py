"""What billing's contract suites share: their clock's instant, and the repositories under
contract carrying a fresh prefix for the test's ids (the ``contract_tag`` fixture), so a
test's PostgreSQL rows meet no other test's."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

NOW = datetime(2026, 11, 29, 12, tzinfo=UTC)
"""The instant the contract tests' transfers, leases and counts are made at."""


@dataclass(kw_only=True)
class Tagged:
    """Repositories under contract and the prefix of this test's ids."""

    tag: str

    def id(self, name: str) -> str:
        """``name`` under this test's prefix."""
        return f"{self.tag}{name}"
