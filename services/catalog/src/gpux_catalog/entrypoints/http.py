"""The catalog's HTTP routes: none of its own.

Every service serves ``/healthz``, ``/readyz`` and ``/metrics`` (``gpux_platform.service``);
that is all the catalog answers. Its data reaches clients through the catalog topics and
the gateway, never through this process.
"""

from __future__ import annotations

from collections.abc import Sequence

from fastapi import APIRouter

ROUTERS: Sequence[APIRouter] = ()
"""The catalog's own routers, mounted beside the standard ones: none."""
