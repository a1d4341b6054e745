"""The views the gateway keeps only in memory, rebuilt from compacted topics at every start."""
