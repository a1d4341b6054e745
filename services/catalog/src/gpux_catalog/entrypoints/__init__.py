"""How the catalog is driven: the publication check (start-up and timer) and its HTTP routes."""
