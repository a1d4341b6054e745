"""PostgreSQL persistence of the matching service: command log, snapshots, offer owners."""
