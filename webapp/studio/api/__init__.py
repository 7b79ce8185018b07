"""REST API of the studio (mounted under /api/ by webapp.urls)."""
