"""The AsyncAPI document as YAML: what every service serves and ``docs/asyncapi.yaml`` holds.

``python -m gpux_platform.asyncapi`` prints it; ``make asyncapi`` writes the docs copy.
"""

from __future__ import annotations

import functools

import yaml

from gpux_contracts.asyncapi import document


@functools.cache
def render() -> str:
    """The registry's AsyncAPI 3 document as YAML (computed once per process)."""
    text: str = yaml.safe_dump(document(), sort_keys=False, allow_unicode=True, width=100)
    return text


if __name__ == "__main__":
    print(render(), end="")
