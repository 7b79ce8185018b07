"""End-to-end fixtures: a live ParaSim Studio (web server and a real Celery worker) and Chromium.

The server runs as `./studio run` does, in subprocesses over a fresh data folder: SQLite and
kombu's filesystem broker, seeded with `manage.py seed_hardware` and the demo account. The
browser is Debian's Chromium driven by Playwright; in CI (CI=true) a missing browser fails,
elsewhere the tests are skipped with the command that enables them.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
BROWSER_MISSING = (
    f"the end-to-end tests need Debian's Chromium at {CHROMIUM}: "
    "run `sudo apt-get install chromium` to enable them"
)
NOT_BUILT = "the front end is not built: run `npm ci && npm run build` in frontend/"
SCREENSHOTS = ROOT / "test-artifacts" / "screenshots"
DOCS_SCREENSHOTS = ROOT / "docs" / "screenshots"
VIEWPORT = {"width": 1280, "height": 800}
DEMO_USER = ("demo", "parasim-demo")
QUEUES = "default,gajgerqueue"


def free_port() -> int:
    """Return a TCP port that is free on 127.0.0.1 now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def server_environment(data_dir: Path) -> dict[str, str]:
    """Return the environment of the server and worker: embedded default in `data_dir`."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"DATABASE_URL", "CELERY_BROKER_URL", "DJANGO_SETTINGS_MODULE"}
    }
    env.update(
        {
            "PARASIM_DATA_DIR": str(data_dir),
            "DJANGO_SETTINGS_MODULE": "webapp.settings.local",
            "DEBUG": "true",
            "PARASIM_QUEUES": QUEUES,
            "PYTHONUNBUFFERED": "1",
            "LOG_LEVEL": "WARNING",
        }
    )
    return env


def stop(process: subprocess.Popen[bytes]) -> None:
    """Stop a process group we started: SIGTERM, then SIGKILL after 20 s."""
    if process.poll() is not None:
        return
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def require_browser() -> None:
    """Fail in CI, skip elsewhere, when Chromium is not installed."""
    if Path(CHROMIUM).exists():
        return
    if os.environ.get("CI", "").lower() in {"1", "true", "yes"}:
        pytest.fail(BROWSER_MISSING)
    pytest.skip(BROWSER_MISSING)


def manage(data_dir: Path, *command: str, extra_env: Mapping[str, str] | None = None) -> str:
    """Run `manage.py COMMAND` on the server's data in `data_dir`; return its output."""
    env = {**server_environment(data_dir), **(extra_env or {})}
    done = subprocess.run(
        [sys.executable, "manage.py", *command],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout


# The environment each live server runs with, by its base URL (`live_studio_env`).
LIVE_ENVIRONMENTS: dict[str, dict[str, str]] = {}


@contextmanager
def running_studio(data_dir: Path, extra_env: Mapping[str, str] | None = None) -> Iterator[str]:
    """Yield the base URL of a server with one real Celery worker (one run at a time) beside
    it, on a fresh embedded default in `data_dir`; `extra_env` adds settings to both."""
    require_browser()
    if not (ROOT / "frontend" / "dist" / ".vite" / "manifest.json").exists():
        pytest.fail(NOT_BUILT)
    env = {**server_environment(data_dir), **(extra_env or {})}
    python = sys.executable
    for command in (["migrate", "--noinput", "-v", "0"], ["seed_hardware"], ["ensure_demo_user"]):
        manage(data_dir, *command, extra_env=extra_env)
    port = free_port()
    names = ("web", "worker", "worker-interactive")
    logs = {name: (data_dir / f"{name}.log").open("wb") for name in names}
    web = subprocess.Popen(
        [python, "manage.py", "runserver", "--noreload", f"127.0.0.1:{port}"],
        cwd=ROOT,
        env=env,
        stdout=logs["web"],
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    worker_command = [python, "-m", "celery", "-A", "webapp", "worker", "--concurrency=1"]
    worker_command += ["-Q", QUEUES, "--hostname", f"e2e-{port}@localhost"]
    worker_command += ["--loglevel=WARNING", "--without-gossip", "--without-mingle"]
    worker = subprocess.Popen(
        worker_command,
        cwd=ROOT,
        env=env,
        stdout=logs["worker"],
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    # Test-runs, model checks and the analyzer run on a worker of their own, as `./studio run`
    # starts it (webapp/interactive.py).
    interactive_command = [python, "-m", "celery", "-A", "webapp", "worker", "--concurrency=2"]
    interactive_command += ["-Q", "interactive", "--hostname", f"e2e-interactive-{port}@localhost"]
    interactive_command += ["--loglevel=WARNING", "--without-gossip", "--without-mingle"]
    interactive = subprocess.Popen(
        interactive_command,
        cwd=ROOT,
        env=env,
        stdout=logs["worker-interactive"],
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    LIVE_ENVIRONMENTS[base] = env
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{base}/healthz", timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline or web.poll() is not None:
                pytest.fail("the web server did not start:\n" + (data_dir / "web.log").read_text())
            time.sleep(0.3)
        yield base
    finally:
        stop(web)
        stop(worker)
        stop(interactive)
        for log in logs.values():
            log.close()


@pytest.fixture(scope="session")
def live_studio(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Return the base URL of a running server with one real Celery worker beside it."""
    with running_studio(tmp_path_factory.mktemp("studio-data")) as base:
        yield base


@pytest.fixture(scope="session")
def live_studio_env(live_studio: str) -> dict[str, str]:
    """Return the environment the live server runs with (its data folder and settings), for
    a test that writes records straight into its database (`manage.py shell`)."""
    return LIVE_ENVIRONMENTS[live_studio]


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """Return a headless Chromium (Debian's) driven by Playwright."""
    require_browser()
    # Playwright's sync API runs an event loop in this thread; the tests' own database reads
    # are still synchronous. Allowed for the browser tests only, and restored afterwards.
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    from playwright.sync_api import sync_playwright

    try:
        with sync_playwright() as playwright:
            chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            yield chromium
            chromium.close()
    finally:
        if previous is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


def signed_in_page(browser: Any, base_url: str, username: str, password: str) -> Any:
    """Return a 1280x800 page of a new browser context signed in as `username`, on the
    hardware list (close it with `page.context.close()`)."""
    context = browser.new_context(viewport=VIEWPORT, base_url=base_url, accept_downloads=True)
    context.set_default_timeout(15_000)
    page = context.new_page()
    page.goto("/accounts/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()
    page.get_by_role("heading", name="Hardware database").wait_for()
    return page


@pytest.fixture
def page(browser: Any, live_studio: str) -> Iterator[Any]:
    """Return a 1280x800 page signed in as the demo user, on the hardware list."""
    page = signed_in_page(browser, live_studio, *DEMO_USER)
    yield page
    page.context.close()


def screenshot(page: Any, name: str) -> Path:
    """Save a screenshot of the page as test-artifacts/screenshots/NAME.png.

    With PARASIM_UPDATE_SCREENSHOTS=1 it also replaces the README's copy in docs/screenshots/.
    """
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path))
    if os.environ.get("PARASIM_UPDATE_SCREENSHOTS") == "1":
        DOCS_SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, DOCS_SCREENSHOTS / f"{name}.png")
    return path
