"""``python -m gpux_catalog`` runs the catalog service."""

from gpux_catalog.bootstrap import SPEC
from gpux_platform.service import main

if __name__ == "__main__":
    main(SPEC)
