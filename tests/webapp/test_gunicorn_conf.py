"""webapp/gunicorn.conf.py, the production web server's settings: synchronous workers, as many
as the cores plus one unless WEB_CONCURRENCY says otherwise (docs/deployment.md, "Web server")."""

from __future__ import annotations

import os
import runpy
from pathlib import Path
from typing import Any

import pytest

CONFIG = Path(__file__).resolve().parents[2] / "webapp" / "gunicorn.conf.py"


def settings(monkeypatch: pytest.MonkeyPatch, **env: str) -> dict[str, Any]:
    for name in ("WEB_CONCURRENCY", "GUNICORN_BIND"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return runpy.run_path(str(CONFIG))


def test_the_workers_are_synchronous_one_per_core_plus_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    config = settings(monkeypatch)
    assert config["worker_class"] == "sync"
    assert config["workers"] == min(len(os.sched_getaffinity(0)) + 1, 9)
    assert (config["bind"], config["accesslog"]) == ("0.0.0.0:8000", "-")


def test_the_environment_sets_the_workers_and_the_address(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    config = settings(monkeypatch, WEB_CONCURRENCY="12", GUNICORN_BIND="127.0.0.1:9000")
    assert (config["workers"], config["bind"]) == (12, "127.0.0.1:9000")


def test_gunicorn_reads_the_file(monkeypatch: pytest.MonkeyPatch) -> None:
    from gunicorn.config import Config

    config = Config()
    for name, value in settings(monkeypatch, WEB_CONCURRENCY="2").items():
        if name in config.settings:
            config.set(name, value)
    assert (config.workers, config.worker_class_str, config.threads) == (2, "sync", 1)
    assert callable(config.post_worker_init)


def test_a_new_worker_loads_the_views_and_the_tasks_before_its_first_request(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from webapp.celery import app

    settings(monkeypatch)["post_worker_init"](None)
    assert app.finalized and "studio.reap_lost_simulations" in app.tasks


@pytest.mark.parametrize(
    ("environ", "status", "sent"),
    [
        ({}, "200 OK", 1234),
        ({"HTTP_REFERER": 'https://x/?q="a"', "HTTP_USER_AGENT": 'curl "8"'}, "404 Not Found", 0),
        ({"HTTP_AUTHORIZATION": "Basic dXNlcjpwYXNz"}, "201 Created", None),  # user:pass
        ({"HTTP_AUTHORIZATION": "Token abc", "RAW_URI": '/api/?q="x"'}, "500", 17),
    ],
)
def test_the_access_line_is_gunicorns_own(
    monkeypatch: pytest.MonkeyPatch, environ: dict[str, str], status: str, sent: int | None
) -> None:
    import datetime
    import logging
    from types import SimpleNamespace

    from gunicorn.config import Config
    from gunicorn.glogging import Logger

    monkeypatch.setattr(Logger, "now", lambda self: "[28/Nov/2026:18:00:00 +0000]")
    config = Config()
    config.set("accesslog", "-")
    lines: dict[str, list[str]] = {}
    for name, cls in (("gunicorn", Logger), ("ours", settings(monkeypatch)["logger_class"])):
        logger = cls(config)
        handler = logging.Handler()
        handler.emit = lambda record, name=name: lines.setdefault(name, []).append(  # type: ignore[method-assign]
            record.getMessage()
        )
        logger.access_log.handlers = [handler]
        base = {
            "REMOTE_ADDR": "10.0.0.7",
            "REQUEST_METHOD": "GET",
            "RAW_URI": "/api/components/?type=GPU",
            "SERVER_PROTOCOL": "HTTP/1.1",
        }
        response = SimpleNamespace(status=status, sent=sent, headers=[("Content-Type", "x")])
        request = SimpleNamespace(headers=[("HOST", "example.org")])
        logger.access(response, request, {**base, **environ}, datetime.timedelta(microseconds=1500))
    assert lines["ours"] == lines["gunicorn"] and len(lines["ours"]) == 1
