"""Django app configuration for the hardware database."""

from __future__ import annotations

from django.apps import AppConfig


class HwdbConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "hwdb"
    verbose_name = "Hardware database"
