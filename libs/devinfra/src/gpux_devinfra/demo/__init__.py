"""The demo market `make up` loads: sellers, offers and a funded buyer, through the public API."""
