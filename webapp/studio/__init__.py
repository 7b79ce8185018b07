"""The studio app: application models, simulations and sweeps, and the Celery tasks running them."""
