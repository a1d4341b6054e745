"""Kept only for ``libs/devinfra/tests/unit/test_demo_dataset.py``, which imports ``read_rates``
from here; the FX loader is ``gpux_pricing.service.fx``. Delete once that test imports it there."""

from gpux_pricing.service.fx import read_rates

__all__ = ["read_rates"]
