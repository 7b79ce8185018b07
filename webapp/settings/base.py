"""Settings shared by every environment; everything site-specific comes from the environment.

Variables: DATABASE_URL (default: SQLite under PARASIM_DATA_DIR), CELERY_BROKER_URL
(default: kombu's filesystem transport under PARASIM_DATA_DIR), SECRET_KEY, DEBUG,
ALLOWED_HOSTS (comma-separated), PARASIM_DATA_DIR (default: ./data).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent.parent
DATA_DIR = Path(os.environ.get("PARASIM_DATA_DIR", BASE_DIR / "data")).resolve()


def env_bool(name: str, default: bool) -> bool:
    """Return the boolean value of environment variable `name` ("1", "true", "yes", "on")."""
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_list(name: str, default: str) -> list[str]:
    """Return a comma-separated environment variable as a list of non-empty items."""
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


def queue_limits_from_env(
    text: str,
    *,
    builtin: dict[str, dict[str, list[int]]],
    fallback: dict[str, list[int]],
    queues: list[str],
    max_run_s: int,
) -> dict[str, dict[str, list[int]]]:
    """Return every queue's limits {field: [default, maximum]}: `builtin`'s entry (or
    `fallback`) with the fields that the JSON `text` gives for the queue replacing its own.

    Raise ImproperlyConfigured naming the entry that is not 1 <= default <= maximum, or a
    wall-clock maximum above `max_run_s` (PARASIM_MAX_RUN_SECONDS)."""
    try:
        given = json.loads(text) if text.strip() else {}
    except ValueError as error:
        raise ImproperlyConfigured(f"PARASIM_QUEUE_LIMITS is not JSON: {error}") from error
    if not isinstance(given, dict):
        raise ImproperlyConfigured("PARASIM_QUEUE_LIMITS: expected an object of queues.")
    limits: dict[str, dict[str, list[int]]] = {}
    for queue in queues:
        override = given.get(queue) or {}
        if not isinstance(override, dict):
            raise ImproperlyConfigured(f"PARASIM_QUEUE_LIMITS {queue}: expected an object.")
        entry = {**builtin.get(queue, fallback), **override}
        for field, pair in entry.items():
            where = f"PARASIM_QUEUE_LIMITS {queue}.{field}"
            if field not in fallback:
                raise ImproperlyConfigured(f"{where}: unknown; known: {', '.join(fallback)}.")
            ok = isinstance(pair, list) and len(pair) == 2
            ok = ok and all(isinstance(v, int) and not isinstance(v, bool) for v in pair)
            if not ok or not 1 <= pair[0] <= pair[1]:
                raise ImproperlyConfigured(
                    f"{where}: expected [default, maximum], whole "
                    f"seconds with 1 <= default <= maximum; got {pair!r}."
                )
            if field == "time_limit_s" and pair[1] > max_run_s:
                raise ImproperlyConfigured(
                    f"{where}: the maximum {pair[1]} s is above "
                    f"PARASIM_MAX_RUN_SECONDS ({max_run_s} s)."
                )
        limits[queue] = entry
    return limits


SECRET_KEY = os.environ.get("SECRET_KEY", "")
DEBUG = env_bool("DEBUG", False)
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "localhost,127.0.0.1,[::1]")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", "")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "hwdb",
    "webapp.studio",
    "webapp.accounts",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Last: process_exception runs innermost first, and a view's database error must be
    # answered here before any other middleware sees it.
    "webapp.middleware.DatabaseUnavailableMiddleware",
]
# What a request answers during a database outage says to retry after (webapp/middleware.py).
PARASIM_DATABASE_RETRY_AFTER_S = int(os.environ.get("PARASIM_DATABASE_RETRY_AFTER_S", "5"))

ROOT_URLCONF = "webapp.urls"
WSGI_APPLICATION = "webapp.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "frontend" / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {
    "default": dj_database_url.config(
        default=f"sqlite:///{DATA_DIR / 'parasim.sqlite3'}",
        conn_max_age=int(os.environ.get("DATABASE_CONN_MAX_AGE", "0")),
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # Django's backend, whose health check of a persistent connection asks the server only
    # when the connection's socket says something happened (webapp/db/postgresql/base.py).
    DATABASES["default"]["ENGINE"] = "webapp.db.postgresql"
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # The web server and the worker write concurrently: wait for the lock instead of failing.
    DATABASES["default"].setdefault("OPTIONS", {})
    DATABASES["default"]["OPTIONS"].update({"timeout": 30, "transaction_mode": "IMMEDIATE"})

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATICFILES_DIRS = [d for d in [BASE_DIR / "frontend" / "dist"] if d.exists()]

LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/accounts/login/"

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        "webapp.api.authentication.TokenAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_RENDERER_CLASSES": [
        "restapi.renderers.JSONRenderer",
        "rest_framework.renderers.BrowsableAPIRenderer",
    ],
    "DEFAULT_PAGINATION_CLASS": "hwdb.api.pagination.BoundedPageNumberPagination",
    "PAGE_SIZE": 50,
    "DEFAULT_FILTER_BACKENDS": [
        "django_filters.rest_framework.DjangoFilterBackend",
        "rest_framework.filters.SearchFilter",
        "rest_framework.filters.OrderingFilter",
    ],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "webapp.api.exceptions.exception_handler",
    "DEFAULT_THROTTLE_RATES": {"launch": os.environ.get("PARASIM_LAUNCH_RATE", "120/min")},
}

# Brute-force throttling of sign-in (webapp/accounts/throttling.py): wrong passwords counted
# per username and per client address within a window of seconds; at the limit, sign-in is
# refused (429 from the API) until the window ends.
PARASIM_LOGIN_WINDOW_S = int(os.environ.get("PARASIM_LOGIN_WINDOW_S", "900"))
PARASIM_LOGIN_FAILURES_PER_USERNAME = int(
    os.environ.get("PARASIM_LOGIN_FAILURES_PER_USERNAME", "10")
)
PARASIM_LOGIN_FAILURES_PER_ADDRESS = int(os.environ.get("PARASIM_LOGIN_FAILURES_PER_ADDRESS", "30"))

SPECTACULAR_SETTINGS = {
    "TITLE": "ParaSim Studio API",
    "DESCRIPTION": "Hardware database, computational and system models, simulations.",
    "VERSION": "0.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    "ENUM_NAME_OVERRIDES": {
        "SimulationStatusEnum": "webapp.studio.models.SimulationStatus",
        "SweepStatusEnum": "webapp.studio.models.SweepStatus",
    },
}

# Celery: the filesystem transport needs no service (embedded default); Redis at scale.
BROKER_DIR = DATA_DIR / "broker"
# The cache: shared by every web process when PARASIM_CACHE_URL names a Redis database (the
# launch rate is then one limit per user, and a rendered list page serves every process);
# otherwise each process keeps its own in memory. webapp/cache.py: a Redis that fails is a miss.
PARASIM_CACHE_URL = os.environ.get("PARASIM_CACHE_URL", "")
CACHES = {
    "default": (
        {
            "BACKEND": "webapp.cache.SharedRedisCache",
            "LOCATION": PARASIM_CACHE_URL,
            "KEY_PREFIX": "parasim",
            "OPTIONS": {"socket_connect_timeout": 0.5, "socket_timeout": 0.5},
        }
        if PARASIM_CACHE_URL
        else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
    ),
    # Each process's own copies of rendered list pages, in front of the above (restapi/cache.py),
    # and of launched snapshots, kept as objects (read-only to their readers).
    "local": {"BACKEND": "webapp.cache.ObjectCache", "LOCATION": "local"},
}

CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", "filesystem://")
if CELERY_BROKER_URL.startswith("filesystem://"):
    CELERY_BROKER_TRANSPORT_OPTIONS: dict[str, object] = {
        "data_folder_in": str(BROKER_DIR / "out"),
        "data_folder_out": str(BROKER_DIR / "out"),
        "control_folder": str(BROKER_DIR / "control"),
        "store_processed": False,
        # The transport polls its folder; 1 s (kombu's default) would be each launch's latency.
        "polling_interval": 0.1,
    }
    # The transport expects its folders to exist; the web process and the worker both write.
    for _folder in ("out", "control"):
        (BROKER_DIR / _folder).mkdir(parents=True, exist_ok=True)
else:
    CELERY_BROKER_TRANSPORT_OPTIONS = {}
CELERY_TASK_IGNORE_RESULT = True
# Where interactive jobs (webapp/interactive.py) leave the answer their web request waits for:
# the broker's Redis, or files beside the filesystem transport's. Only that task uses it: an
# app-wide result backend would make every task sent (each launch) subscribe to its result.
PARASIM_INTERACTIVE_RESULT_BACKEND = os.environ.get("PARASIM_INTERACTIVE_RESULT_BACKEND") or (
    CELERY_BROKER_URL
    if CELERY_BROKER_URL.startswith(("redis://", "rediss://"))
    else f"file://{BROKER_DIR / 'results'}"
)
if PARASIM_INTERACTIVE_RESULT_BACKEND.startswith("file://"):
    (BROKER_DIR / "results").mkdir(parents=True, exist_ok=True)
CELERY_RESULT_EXPIRES = 600

# Simulation queues (MERPSYS: a launch names the queue its simulator listens on, paper 000,
# sections 2.2 and 5.4). PARASIM_QUEUES="default,gajgerqueue" gives the names; a worker serves
# some or all of them with `celery -A webapp worker -Q ...`.
QUEUE_DESCRIPTIONS = {
    "default": "General simulation queue, for interactive runs of seconds.",
    "batch": "Longer runs: higher wall-clock and CPU-time limits.",
    "gajgerqueue": "The simulation queue of the MERPSYS GPU example (paper 000, section 5.4).",
}
PARASIM_QUEUES = {
    name: QUEUE_DESCRIPTIONS.get(name, "")
    for name in env_list("PARASIM_QUEUES", "default,batch,gajgerqueue")
}
PARASIM_MAX_RUN_SECONDS = int(os.environ.get("PARASIM_MAX_RUN_SECONDS", "600"))
# Each queue's limits of one run, [default, maximum] in seconds: `time_limit_s` the wall clock,
# `cpu_limit_s` the CPU time; a launch may ask for any value up to the maximum. A queue not
# named here gets INTERACTIVE_LIMITS. PARASIM_QUEUE_LIMITS (JSON, the same shape) overrides
# entries, e.g. '{"default": {"time_limit_s": [10, 60]}}'.
INTERACTIVE_LIMITS = {"time_limit_s": [30, 120], "cpu_limit_s": [60, 240]}
PARASIM_QUEUE_LIMITS = queue_limits_from_env(
    os.environ.get("PARASIM_QUEUE_LIMITS", ""),
    builtin={
        "default": INTERACTIVE_LIMITS,
        "gajgerqueue": INTERACTIVE_LIMITS,
        "batch": {"time_limit_s": [300, 600], "cpu_limit_s": [600, 1200]},
    },
    fallback=INTERACTIVE_LIMITS,
    queues=list(PARASIM_QUEUES),
    max_run_s=PARASIM_MAX_RUN_SECONDS,
)
# Runs of one user that may be sent to the workers or running at once, over all queues; the
# user's further runs wait, stored as queued and held back, while other users' runs go first
# (webapp.studio.dispatch, docs/deployment.md). 0: no limit.
PARASIM_MAX_RUNNING_PER_USER = int(os.environ.get("PARASIM_MAX_RUNNING_PER_USER", "4"))
# Test-runs, model checks and the kernel analyzer run their sandbox child on a worker serving
# this queue (never in a web process, webapp/interactive.py); it is not a simulation queue.
PARASIM_INTERACTIVE_QUEUE = os.environ.get("PARASIM_INTERACTIVE_QUEUE", "interactive")
# Such jobs one user may have in flight at once; one more is answered 429. 0: no limit.
PARASIM_MAX_INTERACTIVE_PER_USER = int(os.environ.get("PARASIM_MAX_INTERACTIVE_PER_USER", "2"))
# Run them in the calling process instead (the test settings; never in a deployment).
PARASIM_INTERACTIVE_EAGER = env_bool("PARASIM_INTERACTIVE_EAGER", False)
# What hands the apps' services a runner of sandbox entries for a user (a dotted path, so that
# `hwdb` names no project module): the interactive worker's.
PARASIM_SANDBOX_RUNNER = "webapp.interactive.sandbox_runner"
PARASIM_MAX_ATTEMPTS = int(os.environ.get("PARASIM_MAX_ATTEMPTS", "3"))
PARASIM_MAX_SWEEP = int(os.environ.get("PARASIM_MAX_SWEEP", "1000"))
# Timeline entries one run may ask to keep (`timeline_limit`); each costs its result ~200 bytes.
PARASIM_MAX_TIMELINE_LIMIT = int(os.environ.get("PARASIM_MAX_TIMELINE_LIMIT", "100000"))
# Admission at launch: processes one run may place, and runs one user may have queued or
# running at once (at least a whole sweep's worth).
PARASIM_MAX_PROCESSES = int(os.environ.get("PARASIM_MAX_PROCESSES", "100000"))
PARASIM_MAX_ACTIVE_RUNS = int(os.environ.get("PARASIM_MAX_ACTIVE_RUNS", "2000"))
# A running simulation whose worker answers no ping and whose heartbeat is older than this
# is lost: requeued, or failed once PARASIM_MAX_ATTEMPTS starts have been used.
PARASIM_LOST_AFTER_SECONDS = int(os.environ.get("PARASIM_LOST_AFTER_SECONDS", "60"))
PARASIM_REAP_EVERY_SECONDS = float(os.environ.get("PARASIM_REAP_EVERY_SECONDS", "30"))
CELERY_TASK_DEFAULT_QUEUE = next(iter(PARASIM_QUEUES), "default")
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
if CELERY_BROKER_URL.startswith(("redis://", "rediss://")):
    # An unacknowledged run is redelivered after this long: keep it above the hard limit.
    CELERY_BROKER_TRANSPORT_OPTIONS["visibility_timeout"] = int(
        os.environ.get("PARASIM_VISIBILITY_TIMEOUT", str(PARASIM_MAX_RUN_SECONDS + 120))
    )
    # Fairness between users: one Redis list per priority 0..9 of each queue, 0 popped first
    # (webapp.studio.dispatch.fair_priority). Producers and workers must agree on these steps: a
    # message put at a level no worker listens to waits until one does.
    CELERY_BROKER_TRANSPORT_OPTIONS["priority_steps"] = list(range(10))
    # Messages a worker received but had not acknowledged when it lost the broker (a Redis
    # restart) are put back after the visibility timeout by a sweep every 10 s; kombu's
    # default scans only on every 10th sweep, which added up to 100 s to such a run's wait.
    CELERY_BROKER_TRANSPORT_OPTIONS["unacked_restore_throttle"] = 1
CELERY_BEAT_SCHEDULE = {
    "studio-reap-lost-simulations": {
        "task": "studio.reap_lost_simulations",
        "schedule": PARASIM_REAP_EVERY_SECONDS,
    },
    # Studies go on after a restart of the workers (webapp.studio.services.studies).
    "studio-advance-studies": {
        "task": "studio.advance_studies",
        "schedule": PARASIM_REAP_EVERY_SECONDS,
    },
}
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TIMEZONE = TIME_ZONE

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
}
