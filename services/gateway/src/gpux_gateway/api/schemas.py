"""Deprecated: ``gpux_gateway.offers.schemas``."""

from gpux_gateway.offers.schemas import OfferIn

__all__ = ["OfferIn"]
