"""API keys: an account's keys, and who a presented key stands for."""
