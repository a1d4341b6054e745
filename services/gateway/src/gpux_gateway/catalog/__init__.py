"""Public reference data: GPU models and their fit, models, estimates, recommendations."""
