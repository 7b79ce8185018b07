"""Settings for a developer's machine and the embedded default (SQLite, filesystem broker)."""

from __future__ import annotations

import os

from webapp.settings.base import *  # noqa: F403
from webapp.settings.base import DATA_DIR, env_bool

DEBUG = env_bool("DEBUG", True)
SECRET_KEY = os.environ.get("SECRET_KEY") or "parasim-local-development-key-not-for-production"
DATA_DIR.mkdir(parents=True, exist_ok=True)
