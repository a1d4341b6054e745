"""The runtime every gpux service shares.

Broker, inbox/outbox, database, migrations, telemetry, problems, settings.
"""
