"""What checks where an endpoint URL leads, before it is stored and before each attempt."""

from __future__ import annotations

from typing import Protocol


class UrlGuard(Protocol):
    """Resolves an endpoint URL's host and says why webhooks may not reach it."""

    async def refusal(self, url: str) -> str | None:
        """Why ``url`` may not be an endpoint's (its form, or a non-public address its host
        resolves to), or None when it may."""
        ...
