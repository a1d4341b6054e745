"""``python -m gpux_matching`` runs the matching service."""

from gpux_common.service import main
from gpux_matching.bootstrap import SPEC

if __name__ == "__main__":
    main(SPEC)
