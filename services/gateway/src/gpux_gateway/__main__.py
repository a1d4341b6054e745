"""``python -m gpux_gateway`` runs the gateway service."""

from gpux_gateway.bootstrap import SPEC
from gpux_platform.service import main

if __name__ == "__main__":
    main(SPEC)
