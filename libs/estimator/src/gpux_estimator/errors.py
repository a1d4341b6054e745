"""Errors raised by the catalog domain; all are ValueErrors so callers can map them to 4xx."""

from __future__ import annotations


class CatalogError(ValueError):
    """Base class of every error the catalog domain raises."""


class InvalidInputError(CatalogError):
    """An estimator, fit or job input outside its documented range."""


class CatalogDataError(CatalogError):
    """A GPU or model data table that is malformed or inconsistent."""


class UnknownItemError(CatalogError):
    """A GPU or model id that the catalog does not contain."""
