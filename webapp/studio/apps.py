"""Django app configuration for the studio: application models, simulations, sweeps."""

from __future__ import annotations

from django.apps import AppConfig


class StudioConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "webapp.studio"
    label = "studio"
    verbose_name = "Simulation studio"
