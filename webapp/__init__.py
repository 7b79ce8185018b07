"""ParaSim Studio web application: Django project, settings and the Celery app."""

from __future__ import annotations

from webapp.celery import app as celery_app

__all__ = ["celery_app"]
