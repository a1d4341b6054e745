"""The catalog's adapters: PostgreSQL (``postgres``), in memory (``memory``), the data files."""
