"""gpux pricing service: Validates offers; publishes best ask, depth and history."""
