"""``python -m gpux_matching`` runs the matching service."""

from gpux_matching.bootstrap import SPEC
from gpux_platform.service import main

if __name__ == "__main__":
    main(SPEC)
