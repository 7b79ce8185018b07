"""Database backends of the web side (`webapp.db.postgresql`)."""
