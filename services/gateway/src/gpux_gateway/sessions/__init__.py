"""Browser sessions: an HttpOnly cookie that stands for an API key."""
