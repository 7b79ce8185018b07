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
