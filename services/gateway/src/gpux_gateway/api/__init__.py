"""Deprecated import paths, kept only while libs/devinfra's tests still use them.

Import from the resources instead (``catalog.service``, ``catalog.schemas``,
``offers.schemas``); this package goes once those tests do.
"""
