"""The gateway's HTTP routes, one module per resource.

Route modules do not use ``from __future__ import annotations``: FastAPI evaluates
their dependency annotations, which name closure variables (the router's own
dependencies), and postponed annotations would hide those from it.
"""
