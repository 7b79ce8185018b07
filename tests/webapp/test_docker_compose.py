"""docker-compose.yml against the code it runs: every variable it sets is one the settings
read, and every command names a module, management command, queue or task that exists."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.core.management import get_commands
from django.urls import resolve

from webapp.celery import app as celery_app

ROOT = Path(__file__).resolve().parents[2]
SECRET = "compose-check-" + "k" * 60
APP_IMAGE = "parasim-studio:"
# ${NAME:-default} and ${NAME:?message}, as docker compose substitutes them
SUBSTITUTION = re.compile(r"\$\{(\w+)(?::-([^}]*)|:\?[^}]*)?\}")
# Imports the settings module the compose file names with its environment, recording every
# variable read, and prints the reads with the queues and the beat schedule it configured.
RECORD_READS = """
import importlib, json, os
class Recording(dict):
    read = set()
    def get(self, key, default=None):
        self.read.add(key)
        return super().get(key, default)
    def __getitem__(self, key):
        self.read.add(key)
        return super().__getitem__(key)
    def __contains__(self, key):
        self.read.add(key)
        return super().__contains__(key)
os.environ = Recording(os.environ)
settings = importlib.import_module(os.environ["DJANGO_SETTINGS_MODULE"])
print(json.dumps({
    "read": sorted(Recording.read),
    "queues": list(settings.PARASIM_QUEUES),
    "interactive_queue": settings.PARASIM_INTERACTIVE_QUEUE,
    "beat_tasks": [entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()],
}))
"""


def substitute(value: object) -> str:
    """Return `value` as compose would run it with no variable of its own set."""
    return SUBSTITUTION.sub(
        lambda match: SECRET if match.group(2) is None else match.group(2), str(value)
    )


@pytest.fixture(scope="module")
def services() -> dict[str, Any]:
    with (ROOT / "docker-compose.yml").open(encoding="utf-8") as handle:
        return yaml.safe_load(handle)["services"]


@pytest.fixture(scope="module")
def app_environment(services: dict[str, Any]) -> dict[str, str]:
    """Return the variables the services running the app's image are given, substituted."""
    environment: dict[str, str] = {}
    for service in services.values():
        if service.get("image", "").startswith(APP_IMAGE):
            environment.update(
                {key: substitute(value) for key, value in service["environment"].items()}
            )
    return environment


@pytest.fixture(scope="module")
def configured(app_environment: dict[str, str], tmp_path_factory: Any) -> dict[str, Any]:
    """Return what the compose file's settings module read and configured, run with its
    environment (and nothing else of the test's)."""
    data_dir = tmp_path_factory.mktemp("data")
    env = {"PATH": os.environ["PATH"], "PARASIM_DATA_DIR": str(data_dir), **app_environment}
    completed = subprocess.run(
        [sys.executable, "-c", RECORD_READS],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert completed.returncode == 0, completed.stderr
    return json.loads(completed.stdout)


def command_words(service: dict[str, Any]) -> list[str]:
    command = service["command"]
    text = command[-1] if command[:2] == ["sh", "-c"] else " ".join(command)
    return substitute(text).split()


def test_every_variable_given_to_the_app_is_one_its_settings_read(
    app_environment: dict[str, str], configured: dict[str, Any]
) -> None:
    # Django reads DJANGO_SETTINGS_MODULE itself, to find the settings module.
    unread = set(app_environment) - set(configured["read"]) - {"DJANGO_SETTINGS_MODULE"}
    assert not unread, f"docker-compose.yml sets variables no setting reads: {sorted(unread)}"


def test_the_web_command_names_management_commands_and_modules_that_exist(
    services: dict[str, Any],
) -> None:
    words = command_words(services["web"])
    commands = get_commands()
    for index, word in enumerate(words[:-1]):
        if word == "manage.py":
            assert words[index + 1] in commands, words[index + 1]
    gunicorn = words.index("gunicorn")
    assert (ROOT / (words[gunicorn + 1].replace(".", "/") + ".py")).is_file()
    assert (ROOT / words[words.index("-c", gunicorn) + 1]).is_file()


def test_the_web_health_check_asks_a_url_the_app_serves(services: dict[str, Any]) -> None:
    (url,) = re.findall(r"http://[^/]+(/\S*?)'", " ".join(services["web"]["healthcheck"]["test"]))
    assert resolve(url).url_name == "healthz"


@pytest.mark.parametrize("name", ["worker", "worker-gajger", "worker-interactive", "beat"])
def test_celery_services_name_the_celery_app_and_configured_queues(
    services: dict[str, Any], configured: dict[str, Any], name: str
) -> None:
    words = command_words(services[name])
    assert words[:3] == ["celery", "-A", "webapp"]
    assert words[3] in {"worker", "beat"}
    if "-Q" in words:
        queues = words[words.index("-Q") + 1].split(",")
        assert set(queues) <= {*configured["queues"], configured["interactive_queue"]}, queues


def test_the_interactive_queue_has_a_worker_of_its_own(
    services: dict[str, Any], configured: dict[str, Any]
) -> None:
    # Test-runs and saves wait for it (webapp/interactive.py): simulations must not hold its
    # slots, and it must not take runs.
    commands = {name: command_words(s) for name, s in services.items() if "command" in s}
    serving = {
        name: words[words.index("-Q") + 1].split(",")
        for name, words in commands.items()
        if "-Q" in words
    }
    interactive = configured["interactive_queue"]
    assert [name for name, queues in serving.items() if interactive in queues] == [
        "worker-interactive"
    ]
    assert serving["worker-interactive"] == [interactive]


def test_the_beat_schedules_tasks_the_workers_have(configured: dict[str, Any]) -> None:
    celery_app.loader.import_default_modules()
    assert configured["beat_tasks"]
    assert set(configured["beat_tasks"]) <= set(celery_app.tasks)
