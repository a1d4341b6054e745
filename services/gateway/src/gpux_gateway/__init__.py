"""gpux gateway service: The REST API and live SSE streams for frontends and sellers."""
