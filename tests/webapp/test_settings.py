"""Settings come from the environment; production settings pass `manage.py check --deploy`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SECRET = "x7#Kq2!mZp9@Lw4$Rt6^Yv8&Nb3*Hc5(Jd1)Fg0_Se2+Ua4=Vo6~Xi8" * 2
PRINT_SETTINGS = (
    "import json, django; django.setup(); from django.conf import settings as s; "
    "print(json.dumps({'engine': s.DATABASES['default']['ENGINE'], "
    "'name': str(s.DATABASES['default']['NAME']), 'broker': s.CELERY_BROKER_URL, "
    "'debug': s.DEBUG, 'hosts': s.ALLOWED_HOSTS}))"
)


def run(args: list[str], tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {
        k: v
        for k, v in os.environ.items()
        if k
        not in {
            "DATABASE_URL",
            "CELERY_BROKER_URL",
            "SECRET_KEY",
            "DEBUG",
            "ALLOWED_HOSTS",
            "DJANGO_ALLOW_ASYNC_UNSAFE",
            "DATABASE_CONN_MAX_AGE",
            "PARASIM_CACHE_URL",
        }
    }
    clean.update(PARASIM_DATA_DIR=str(tmp_path), **env)
    return subprocess.run(
        [sys.executable, *args], cwd=ROOT, env=clean, capture_output=True, text=True, timeout=60
    )


def test_production_settings_pass_the_deployment_check(tmp_path: Path) -> None:
    result = run(
        ["manage.py", "check", "--deploy"],
        tmp_path,
        DJANGO_SETTINGS_MODULE="webapp.settings.production",
        SECRET_KEY=SECRET,
        ALLOWED_HOSTS="parasim.example.org",
    )
    assert result.returncode == 0, result.stderr
    # Every deployment warning (security.W001 ... W022) is dealt with, whatever other apps say.
    assert "security." not in result.stdout + result.stderr


def test_production_settings_refuse_a_short_secret_key(tmp_path: Path) -> None:
    result = run(
        ["manage.py", "check"],
        tmp_path,
        DJANGO_SETTINGS_MODULE="webapp.settings.production",
        SECRET_KEY="short",
    )
    assert result.returncode != 0
    assert "SECRET_KEY must be set to a random string of at least 50 characters" in result.stderr


def test_the_embedded_default_is_sqlite_and_the_filesystem_broker(tmp_path: Path) -> None:
    result = run(["-c", PRINT_SETTINGS], tmp_path, DJANGO_SETTINGS_MODULE="webapp.settings.local")
    assert result.returncode == 0, result.stderr
    settings = json.loads(result.stdout)
    assert settings["engine"] == "django.db.backends.sqlite3"
    assert settings["name"] == str(tmp_path.resolve() / "parasim.sqlite3")
    assert settings["broker"] == "filesystem://"
    assert settings["debug"] is True


def test_database_broker_debug_and_hosts_come_from_the_environment(tmp_path: Path) -> None:
    result = run(
        ["-c", PRINT_SETTINGS],
        tmp_path,
        DJANGO_SETTINGS_MODULE="webapp.settings.production",
        SECRET_KEY=SECRET,
        DATABASE_URL="postgres://parasim:pw@db.internal:5432/parasim",
        CELERY_BROKER_URL="redis://cache.internal:6379/1",
        DEBUG="0",
        ALLOWED_HOSTS="a.example.org, b.example.org",
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {
        "engine": "webapp.db.postgresql",
        "name": "parasim",
        "broker": "redis://cache.internal:6379/1",
        "debug": False,
        "hosts": ["a.example.org", "b.example.org"],
    }


PRINT_CONNECTIONS = (
    "import json, django; django.setup(); from django.conf import settings as s; "
    "d = s.DATABASES['default']; "
    "print(json.dumps([d['CONN_MAX_AGE'], d['CONN_HEALTH_CHECKS']]))"
)


@pytest.mark.parametrize(("given", "expected"), [(None, 600), ("0", 0)])
def test_production_keeps_database_connections_open_between_requests(
    tmp_path: Path, given: str | None, expected: int
) -> None:
    result = run(
        ["-c", PRINT_CONNECTIONS],
        tmp_path,
        DJANGO_SETTINGS_MODULE="webapp.settings.production",
        SECRET_KEY=SECRET,
        DATABASE_URL="postgres://parasim:pw@db.internal:5432/parasim",
        **({"DATABASE_CONN_MAX_AGE": given} if given is not None else {}),
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == [expected, True]


PRINT_CACHE = (
    "import json, django; django.setup(); from django.conf import settings as s; "
    "c = s.CACHES['default']; print(json.dumps([c['BACKEND'], c.get('LOCATION', '')]))"
)


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        (None, ["django.core.cache.backends.locmem.LocMemCache", ""]),
        ("redis://r:6379/1", ["webapp.cache.SharedRedisCache", "redis://r:6379/1"]),
    ],
)
def test_the_web_processes_share_a_cache_in_redis_when_one_is_named(
    tmp_path: Path, given: str | None, expected: list[str]
) -> None:
    result = run(
        ["-c", PRINT_CACHE],
        tmp_path,
        DJANGO_SETTINGS_MODULE="webapp.settings.production",
        SECRET_KEY=SECRET,
        **({"PARASIM_CACHE_URL": given} if given is not None else {}),
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == expected


# --- each queue's run limits (PARASIM_QUEUE_LIMITS) ----------------------------------------

BUILTIN_LIMITS = {"default": {"time_limit_s": [30, 120], "cpu_limit_s": [60, 240]}}


def queue_limits(
    text: str, queues: tuple[str, ...] = ("default", "extra")
) -> dict[str, dict[str, list[int]]]:
    from webapp.settings.base import queue_limits_from_env

    return queue_limits_from_env(
        text,
        builtin=BUILTIN_LIMITS,
        fallback={"time_limit_s": [5, 10], "cpu_limit_s": [10, 20]},
        queues=list(queues),
        max_run_s=600,
    )


def test_queue_limits_override_the_built_in_ones_field_by_field() -> None:
    assert queue_limits('{"default": {"time_limit_s": [3, 8]}}') == {
        "default": {"time_limit_s": [3, 8], "cpu_limit_s": [60, 240]},
        "extra": {"time_limit_s": [5, 10], "cpu_limit_s": [10, 20]},
    }
    assert queue_limits("")["default"] == BUILTIN_LIMITS["default"]


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("{", "is not JSON"),
        ("[1]", "expected an object of queues"),
        ('{"default": 3}', "default: expected an object"),
        (
            '{"default": {"time_limit_s": [10, 5]}}',
            "default.time_limit_s: expected [default, maximum]",
        ),
        ('{"default": {"time_limit_s": [0, 5]}}', "default.time_limit_s"),
        ('{"extra": {"cpu_limit_s": [1.5, 5]}}', "extra.cpu_limit_s"),
        ('{"default": {"time_limit_s": [10, 601]}}', "above PARASIM_MAX_RUN_SECONDS (600 s)"),
        ('{"default": {"memory_s": [1, 2]}}', "default.memory_s: unknown"),
    ],
)
def test_a_bad_queue_limit_setting_is_refused_naming_the_entry(text: str, names: str) -> None:
    from django.core.exceptions import ImproperlyConfigured

    with pytest.raises(ImproperlyConfigured) as error:
        queue_limits(text)
    assert names in str(error.value)


PRINT_PREFIX = (
    "import django; django.setup(); from django.conf import settings as s; "
    "print(s.CELERY_BROKER_TRANSPORT_OPTIONS.get('global_keyprefix', ''))"
)


@pytest.mark.parametrize(
    ("worker", "broker", "prefix"),
    [
        ("gw3", "redis://127.0.0.1:6379/15", "test-gw3:"),
        ("", "redis://127.0.0.1:6379/15", ""),  # one process: the whole database is its own
        ("gw3", "filesystem://", ""),  # nothing shared between the workers' folders
    ],
)
def test_each_parallel_test_process_keeps_its_broker_messages_under_its_own_prefix(
    tmp_path: Path, worker: str, broker: str, prefix: str
) -> None:
    result = run(
        ["-c", PRINT_PREFIX],
        tmp_path,
        DJANGO_SETTINGS_MODULE="webapp.settings.test",
        CELERY_BROKER_URL=broker,
        PYTEST_XDIST_WORKER=worker,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == prefix
