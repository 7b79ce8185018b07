"""Gunicorn settings of the production web server (docs/deployment.md, "Web server"):

    gunicorn webapp.wsgi -c webapp/gunicorn.conf.py

WEB_CONCURRENCY worker processes (default: the CPU cores this process may use, plus one, at
most 9), each serving one request at a time; the access log on standard output; GUNICORN_BIND
(default 0.0.0.0:8000). The access log's lines are Apache's combined format, gunicorn's
default, written by `AccessLogger`. Each process keeps one database connection open (production settings,
DATABASE_CONN_MAX_AGE), so the workers must fit PostgreSQL's max_connections beside Celery's.

Why synchronous workers and not threads: a request is mostly Python (serializing, building
queries), which one process runs on one core at a time. Threaded workers (gthread) keep each
client's connection in the process that accepted it, and with 50 keep-alive clients one of
three processes held nearly all of them, and one core of two stayed idle (docs/deployment.md).
"""

from __future__ import annotations

import os
from typing import Any

from gunicorn.config import AccessLogFormat
from gunicorn.glogging import Logger

MAX_DEFAULT_WORKERS = 9


class AccessLogger(Logger):
    """gunicorn's logger, writing its default access line (Apache's combined format) from the
    values it shows: gunicorn builds a table of every request and response header and
    every WSGI environment variable for each line, a noticeable part of a cached request's
    server CPU. Another `access_log_format` is
    written by gunicorn's own code."""

    def access(self, resp: Any, req: Any, environ: dict[str, Any], request_time: Any) -> None:
        if self.cfg.access_log_format != AccessLogFormat.default:
            super().access(resp, req, environ, request_time)
            return
        if not self.access_log_enabled:
            return
        status = resp.status
        if isinstance(status, str):
            status = status.split(None, 1)[0]
        sent = getattr(resp, "sent", None)
        request = f"{environ['REQUEST_METHOD']} {environ['RAW_URI']} {environ['SERVER_PROTOCOL']}"
        try:
            self.access_log.info(
                '%s - %s %s "%s" %s %s "%s" "%s"',
                *(
                    # What gunicorn's SafeAtoms does to each text: a quote is escaped.
                    value.replace('"', '\\"') if isinstance(value, str) else value
                    for value in (
                        environ.get("REMOTE_ADDR", "-"),
                        self._get_user(environ) or "-",
                        self.now(),
                        request,
                        status,
                        "-" if sent is None else str(sent),
                        environ.get("HTTP_REFERER", "-"),
                        environ.get("HTTP_USER_AGENT", "-"),
                    )
                ),
            )
        except Exception:
            self.exception("could not write an access line")


bind = os.environ.get("GUNICORN_BIND", "0.0.0.0:8000")
workers = int(
    os.environ.get("WEB_CONCURRENCY", min(len(os.sched_getaffinity(0)) + 1, MAX_DEFAULT_WORKERS))
)
worker_class = "sync"
accesslog = "-"
logger_class = AccessLogger
# The workers' heartbeat files: in memory, where Docker's overlay file system cannot stall them.
worker_tmp_dir = "/dev/shm" if os.path.isdir("/dev/shm") else None


def post_worker_init(worker: object) -> None:
    """Import the URL configuration (every view) and the Celery tasks in a new worker process,
    so that its first request does not wait for them."""
    from django.urls import get_resolver

    from webapp.celery import app

    get_resolver().url_patterns  # noqa: B018  (the property imports the modules)
    app.loader.import_default_modules()
    app.finalize(auto=True)
