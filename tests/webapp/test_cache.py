"""The cache shared by the web processes (webapp/cache.py): Redis, failing soft."""

from __future__ import annotations

import logging
import os
import uuid
from typing import Any

import pytest
from django.test import override_settings
from rest_framework.test import APIClient

import webapp.cache
from tests.hwdb.factories import UserFactory
from tests.webapp.studio.live import require_services
from webapp.cache import SharedRedisCache

UNREACHABLE = "redis://127.0.0.1:1/0"  # nothing listens on port 1


def shared_cache(location: str, prefix: str) -> SharedRedisCache:
    return SharedRedisCache(
        location, {"KEY_PREFIX": prefix, "OPTIONS": {"socket_connect_timeout": 0.5}}
    )


def test_two_processes_caches_share_what_one_of_them_keeps() -> None:
    require_services()
    location = os.environ["CELERY_BROKER_URL"]
    prefix = f"test-{uuid.uuid4().hex}"  # the broker's database, keys of this test only
    one, other = shared_cache(location, prefix), shared_cache(location, prefix)
    try:
        one.set("page", {"count": 3}, 30)
        assert other.get("page") == {"count": 3}
        assert other.add("page", "x") is False
        other.delete("page")
        assert one.get("page", "gone") == "gone"
    finally:
        one.delete("page")


def test_each_operation_reuses_one_redis_client() -> None:
    cache = shared_cache(UNREACHABLE, "test")
    client = cache._cache.get_client("page")
    assert cache._cache.get_client("other", write=True) is client
    assert cache.get("page", "default") == "default"  # still failing soft
    assert cache._cache.get_client("page") is client


def test_an_unreachable_cache_is_a_miss_with_one_warning(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(webapp.cache, "_last_warning", [float("-inf")])  # none warned yet
    cache = shared_cache(UNREACHABLE, "test")
    with caplog.at_level(logging.WARNING, logger="webapp.cache"):
        assert cache.get("page", "default") == "default"
        cache.set("page", "value", 30)
        assert (cache.add("page", "value"), cache.has_key("page")) == (False, False)
        assert cache.get_many(["page"]) == {}
    assert [record.getMessage() for record in caplog.records] == [
        "the shared cache is unreachable; serving without it"
    ]


@pytest.mark.django_db
def test_the_api_serves_while_the_shared_cache_is_unreachable(db: Any) -> None:
    client = APIClient()
    client.force_authenticate(UserFactory())
    backend = {"BACKEND": "webapp.cache.SharedRedisCache", "LOCATION": UNREACHABLE}
    local = {"BACKEND": "webapp.cache.ObjectCache", "LOCATION": "local"}
    with override_settings(CACHES={"default": backend, "local": local}):
        assert client.get("/api/components/?type=GPU").status_code == 200
        assert client.get("/api/simulations/").status_code == 200


def test_a_page_is_built_once_for_all_processes_and_kept_in_each_ones_memory() -> None:
    from types import SimpleNamespace

    from django.core.cache import cache, caches

    from restapi.cache import cached

    url = f"http://testserver/api/{uuid.uuid4().hex}/"
    request = SimpleNamespace(
        build_absolute_uri=lambda: url,
        accepted_media_type="application/json",
    )
    view: Any = SimpleNamespace(request=request)
    builds: list[int] = []

    def build() -> dict[str, int]:
        builds.append(1)
        return {"count": len(builds)}

    assert cached(view, version=1, build=build) == {"count": 1}
    caches["local"].clear()  # another process: its memory is empty, the shared cache is not
    assert cached(view, version=1, build=build) == {"count": 1}
    cache.clear()  # the shared entry is gone: this process still has its copy
    assert cached(view, version=1, build=build) == {"count": 1}
    assert cached(view, version=2, build=build) == {"count": 2}  # a new version is built
    assert len(builds) == 2


def test_the_process_cache_keeps_objects_themselves_and_forgets_them_when_due() -> None:
    from webapp.cache import ObjectCache

    local = ObjectCache(f"test-{uuid.uuid4().hex}", {})
    page = {"count": 1}
    local.set("page", page, 30)
    assert local.get("page") is page  # not an unpickled copy
    assert local.add("page", {"count": 2}) is False and local.get("page") is page
    local.set("counter", 1)
    assert local.incr("counter", 2) == 3 and local.get("counter") == 3
    local.set("gone", page, -1)  # expired on arrival
    assert local.get("gone", "missing") == "missing" and local.add("gone", 5) is True
    with pytest.raises(ValueError, match="not found"):
        local.incr("never")
    local.clear()
    assert local.get("page") is None


@pytest.mark.django_db(transaction=True)  # the runs' version is read from committed rows
def test_the_runs_list_adds_queue_places_to_a_copy_of_the_cached_page() -> None:
    import copy

    from django.core.cache import caches
    from django.db import connection

    from tests.webapp.studio.factories import SimulationFactory

    user = UserFactory()
    SimulationFactory.create_batch(2, owner=user)  # queued
    client = APIClient()
    client.force_authenticate(user)
    first = client.get("/api/simulations/").json()
    assert sorted(run["queue_position"] for run in first["results"]) == [1, 2]
    kept = caches["local"]._cache
    before = copy.deepcopy(dict(kept))
    assert client.get("/api/simulations/").json() == first
    assert dict(kept) == before  # what the cache holds is what was built, no places added
    if connection.vendor == "postgresql":  # where the runs list has a version to cache by
        [(page, queued)] = before.values()
        assert len(queued) == 2 and all(run["queue_position"] is None for run in page["results"])


@pytest.mark.django_db(transaction=True)  # the runs' version is read from committed rows
def test_a_runs_list_page_with_no_queued_run_is_kept_rendered(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from django.db import connection

    from restapi.renderers import JSONRenderer
    from tests.webapp.studio.factories import SimulationFactory
    from webapp.studio.models import SimulationStatus

    if connection.vendor != "postgresql":
        pytest.skip("the runs list has a version to cache by on PostgreSQL only")
    user = UserFactory()
    SimulationFactory.create_batch(3, owner=user, status=SimulationStatus.SUCCEEDED)
    client = APIClient()
    client.force_authenticate(user)
    first = client.get("/api/simulations/")
    assert [run["queue_position"] for run in first.json()["results"]] == [None] * 3
    renders: list[object] = []
    render = JSONRenderer.render

    def counted(self: JSONRenderer, *args: Any, **kwargs: Any) -> Any:
        renders.append(args[0])
        return render(self, *args, **kwargs)

    monkeypatch.setattr(JSONRenderer, "render", counted)

    assert client.get("/api/simulations/").content == first.content
    assert renders == []
    # a queued run: a new version, and its place read and rendered on every request
    queued = SimulationFactory(owner=user)
    for _ in range(2):
        page = client.get("/api/simulations/").json()
        places = {run["id"]: run["queue_position"] for run in page["results"]}
        assert places[queued.pk] == 1 and list(places.values()).count(None) == 3
    assert len(renders) == 2
