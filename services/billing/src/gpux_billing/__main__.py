"""``python -m gpux_billing`` runs the billing service."""

from gpux_billing.bootstrap import SPEC
from gpux_platform.service import main

if __name__ == "__main__":
    main(SPEC)
