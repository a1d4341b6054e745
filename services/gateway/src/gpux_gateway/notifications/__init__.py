"""Notifications: each account's own events (recorded with the views' changes), its stream
(``GET /v1/stream/events``) and the webhooks' deliveries queued with them."""
