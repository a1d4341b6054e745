"""The shared contract of gpux services: what every service needs and nothing else."""
