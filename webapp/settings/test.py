"""Settings for the test suite: SQLite unless DATABASE_URL points elsewhere (e.g. PostgreSQL)."""

from __future__ import annotations

import os

from webapp.settings.base import *  # noqa: F403
from webapp.settings.base import (
    CELERY_BROKER_TRANSPORT_OPTIONS,
    CELERY_BROKER_URL,
    REST_FRAMEWORK,
    env_bool,
)

SECRET_KEY = "parasim-test-key"
DEBUG = False
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
CELERY_TASK_ALWAYS_EAGER = os.environ.get("CELERY_TASK_ALWAYS_EAGER", "0") == "1"
REST_FRAMEWORK = {**REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": {"launch": "10000/min"}}
# No cap on a user's runs in flight unless a test (or the environment) sets one.
PARASIM_MAX_RUNNING_PER_USER = int(os.environ.get("PARASIM_MAX_RUNNING_PER_USER", "0"))
# Interactive jobs run in the test process unless a test starts an interactive worker.
PARASIM_INTERACTIVE_EAGER = env_bool("PARASIM_INTERACTIVE_EAGER", True)

# Parallel runs (pytest-xdist) share the broker's Redis database: each worker process keeps its
# messages under a key prefix of its own, which the Celery workers it starts inherit (they read
# these settings with the same PYTEST_XDIST_WORKER), so no worker takes another's runs.
XDIST_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")
if XDIST_WORKER and CELERY_BROKER_URL.startswith(("redis://", "rediss://")):
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        **CELERY_BROKER_TRANSPORT_OPTIONS,
        "global_keyprefix": f"test-{XDIST_WORKER}:",
    }
