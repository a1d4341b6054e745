"""``python -m gpux_pricing`` runs the pricing service."""

from gpux_platform.service import main
from gpux_pricing.bootstrap import SPEC

if __name__ == "__main__":
    main(SPEC)
