"""Django code the fault tests run in a subprocess against their throwaway servers.

The test process's own database is pytest-django's, on the shared server; launching runs on
the throwaway PostgreSQL (and queueing them on the throwaway Redis) happens here instead,
with DATABASE_URL and CELERY_BROKER_URL pointing at them:

    python -m tests.webapp.studio.faultctl migrate
    python -m tests.webapp.studio.faultctl launch COUNT [--queue NAME] [--busy N]
    python -m tests.webapp.studio.faultctl reap

Each command prints one JSON value: the owner's id, the launched runs' ids, or what one pass
of the lost-run check did (asking the live workers over the broker, as beat's would).
"""

from __future__ import annotations

import argparse
import json
import os

import django

OWNER = "faults"


def migrate() -> int:
    """Return the owner's id after migrating the database."""
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)
    owner, _ = get_user_model().objects.get_or_create(username=OWNER)
    return int(owner.pk)


def launch(count: int, *, queue: str | None, busy: int) -> list[int]:
    """Return the ids of `count` new runs of the tiny application (run i computes i + 1
    ops), each after a busy loop of `busy` steps if asked."""
    from django.contrib.auth import get_user_model

    from tests.webapp.studio.factories import TINY_APP, tiny_snapshot
    from webapp.studio.services.launch import simulation_launch

    owner = get_user_model().objects.get(username=OWNER)
    ids = []
    for i in range(count):
        # The tiny application (its result tells the runs apart), after a busy loop of `busy`
        # steps when asked (a run that lasts long enough to be caught in the middle).
        source, variables = TINY_APP, {"steps": 1, "ops": float(i + 1)}
        if busy:
            source = "t = 0\nwhile t < n:\n    t += 1\n" + source
            variables["n"] = busy
        run = simulation_launch(
            user=owner,
            snapshot=tiny_snapshot(),
            app_source=source,
            labels={"CPU": 1},
            variables=variables,
            queue=queue,
            time_limit_s=30,
        )
        ids.append(run.pk)
    return ids


def reap() -> dict[str, list[int]]:
    """Return what one pass of the lost-run check did ({"requeued", "failed", "resent"})."""
    from webapp.studio.tasks import reap_lost_simulations

    return reap_lost_simulations()


def main() -> None:
    parser = argparse.ArgumentParser()
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("migrate")
    launching = commands.add_parser("launch")
    launching.add_argument("count", type=int)
    launching.add_argument("--queue")
    launching.add_argument("--busy", type=int, default=0)
    commands.add_parser("reap")
    arguments = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings.test")
    django.setup()
    if arguments.command == "migrate":
        print(json.dumps(migrate()))
    elif arguments.command == "reap":
        print(json.dumps(reap()))
    else:
        print(json.dumps(launch(arguments.count, queue=arguments.queue, busy=arguments.busy)))


if __name__ == "__main__":
    main()
