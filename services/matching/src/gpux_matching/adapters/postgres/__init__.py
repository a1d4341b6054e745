"""Matching's PostgreSQL adapters: every statement on the ``matching`` schema lives here.

``unit_of_work`` holds the units (``PostgresMatchingUnitOfWork`` over every repository,
``PostgresBookUnitOfWork`` of one partition of the book) and the ``PostgresPartitionStore``
the partitions are built on; the repositories are ``commands`` (the log, its heads and the
snapshots), ``offers``, ``orders`` and ``market``; ``snapshots`` writes snapshots off the
command path.
"""

SCHEMA = "matching"
"""The PostgreSQL schema matching owns."""
