"""What the gateway's resources share: the context, FastAPI dependencies, idempotent creation,
command envelopes and the common request shapes."""
