"""``python -m gpux_gateway`` runs the gateway service."""

from gpux_common.service import main
from gpux_gateway.bootstrap import SPEC

if __name__ == "__main__":
    main(SPEC)
