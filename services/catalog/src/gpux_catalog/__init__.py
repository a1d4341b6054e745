"""gpux catalog service: GPU models, their specs and what fits on them."""
