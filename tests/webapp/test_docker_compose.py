"""docker-compose.yml describes the deployment at scale: services, health checks, variables."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
APP_VARIABLES = {"DATABASE_URL", "CELERY_BROKER_URL", "SECRET_KEY", "ALLOWED_HOSTS", "DEBUG"}


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    with (ROOT / "docker-compose.yml").open(encoding="utf-8") as handle:
        return yaml.safe_load(handle)


def command_line(service: dict[str, Any]) -> str:
    command = service["command"]
    return " ".join(command) if isinstance(command, list) else command


def test_it_has_postgres_redis_web_and_a_worker(compose: dict[str, Any]) -> None:
    assert {"postgres", "redis", "web", "worker", "beat"} <= set(compose["services"])
    assert compose["services"]["postgres"]["image"].startswith("postgres:")
    assert compose["services"]["redis"]["image"].startswith("redis:")


@pytest.mark.parametrize("name", ["postgres", "redis", "web", "worker"])
def test_every_service_has_a_health_check(compose: dict[str, Any], name: str) -> None:
    check = compose["services"][name]["healthcheck"]
    assert check["test"] and check["interval"] and check["retries"] >= 3


def test_the_web_runs_gunicorn_and_the_worker_celery_on_the_default_queue(
    compose: dict[str, Any],
) -> None:
    web, worker = compose["services"]["web"], compose["services"]["worker"]
    assert "gunicorn webapp.wsgi" in command_line(web)
    assert "manage.py migrate" in command_line(web)
    assert "celery -A webapp worker -Q ${WORKER_QUEUES:-default}" in command_line(worker)
    assert "/healthz" in " ".join(web["healthcheck"]["test"])


@pytest.mark.parametrize("name", ["web", "worker"])
def test_web_and_worker_share_the_same_environment(compose: dict[str, Any], name: str) -> None:
    service = compose["services"][name]
    environment = service["environment"]
    assert set(environment) >= APP_VARIABLES
    assert environment == compose["services"]["web"]["environment"]
    assert environment["DJANGO_SETTINGS_MODULE"] == "webapp.settings.production"
    assert (
        environment["DATABASE_URL"].startswith("postgres://")
        and "@postgres:5432/" in environment["DATABASE_URL"]
    )
    assert environment["CELERY_BROKER_URL"].startswith("redis://redis:6379/")
    assert environment["SECRET_KEY"].startswith("${SECRET_KEY:?")
    for dependency in ("postgres", "redis"):
        assert service["depends_on"][dependency]["condition"] == "service_healthy"


def test_the_image_is_built_from_the_repository_dockerfile(compose: dict[str, Any]) -> None:
    assert compose["services"]["web"]["build"] == "."
    assert compose["services"]["worker"]["image"] == compose["services"]["web"]["image"]
    dockerfile = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    assert "requirements/base.txt" in dockerfile and "collectstatic" in dockerfile
