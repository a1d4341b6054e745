"""The views the gateway keeps only in memory, rebuilt from compacted topics at every start, and
the key cache (``principals``) that ``gateway.accounts`` and ``gateway.keys`` keep fresh."""
