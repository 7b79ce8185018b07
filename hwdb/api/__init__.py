"""REST API of the hardware database (mounted under /api/ by webapp.urls)."""
