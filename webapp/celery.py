"""The Celery application; configuration comes from Django settings under the CELERY_ prefix."""

from __future__ import annotations

import os

from celery import Celery

import webapp.broker  # filesystem:// gets the atomic transport
import webapp.studio.worker_life  # noqa: F401  (draws the life before the pool forks)

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings.local")

app = Celery("parasim")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
