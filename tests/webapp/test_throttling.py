"""The per-user launch rate counted in Redis (webapp/api/throttling.py): DRF's sliding window,
one atomic round trip per launch."""

from __future__ import annotations

import os
import threading
import uuid
from types import SimpleNamespace
from typing import Any

import pytest

from tests.webapp.studio.live import require_services
from webapp.api.throttling import LaunchRateThrottle
from webapp.cache import SharedRedisCache

VIEW = SimpleNamespace(throttle_scope="launch")


def launch_request(user_id: int) -> Any:
    return SimpleNamespace(user=SimpleNamespace(is_authenticated=True, pk=user_id))


def throttle(cache: Any, at: list[float]) -> LaunchRateThrottle:
    counted = LaunchRateThrottle()
    counted.cache = cache
    counted.timer = lambda: at[0]  # type: ignore[method-assign]
    return counted


@pytest.fixture
def shared() -> Any:
    require_services()
    cache = SharedRedisCache(
        os.environ["CELERY_BROKER_URL"], {"KEY_PREFIX": f"test-{uuid.uuid4().hex}"}
    )
    yield cache
    client = cache._cache.get_client(write=True)
    for key in client.scan_iter(f"{cache.key_prefix}:*"):
        client.delete(key)


def test_the_window_counts_launches_and_forgets_them_as_drf_does(
    shared: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(LaunchRateThrottle, "THROTTLE_RATES", {"launch": "3/min"})
    at = [1000.0]
    answers = []
    for now in (1000.0, 1001.0, 1002.0, 1003.0):
        at[0] = now
        answers.append(throttle(shared, at).allow_request(launch_request(7), VIEW))
    assert answers == [True, True, True, False]
    refused = throttle(shared, at)
    assert refused.allow_request(launch_request(7), VIEW) is False
    assert refused.wait() == pytest.approx(60 - (1003.0 - 1000.0))  # the oldest leaves then
    assert throttle(shared, at).allow_request(launch_request(8), VIEW)  # another user's own
    at[0] = 1060.0  # 1000.0 is exactly a window old: no longer counted
    assert throttle(shared, at).allow_request(launch_request(7), VIEW)
    assert throttle(shared, at).allow_request(launch_request(7), VIEW) is False


def test_launches_at_once_from_many_processes_pass_up_to_the_limit_and_no_more(
    shared: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(LaunchRateThrottle, "THROTTLE_RATES", {"launch": "10/min"})
    at = [5000.0]
    start = threading.Barrier(25)
    answers: list[bool] = []

    def launch() -> None:
        counted = throttle(
            SharedRedisCache(os.environ["CELERY_BROKER_URL"], {"KEY_PREFIX": shared.key_prefix}),
            at,
        )
        start.wait()
        answers.append(counted.allow_request(launch_request(9), VIEW))

    threads = [threading.Thread(target=launch) for _ in range(25)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(answers) == [False] * 15 + [True] * 10


def test_an_unreachable_redis_limits_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(LaunchRateThrottle, "THROTTLE_RATES", {"launch": "1/min"})
    cache = SharedRedisCache("redis://127.0.0.1:1/0", {"OPTIONS": {"socket_connect_timeout": 0.5}})
    at = [1.0]
    assert all(throttle(cache, at).allow_request(launch_request(1), VIEW) for _ in range(3))


def test_a_rate_of_none_per_minute_refuses_every_launch_as_drf_does(
    shared: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(LaunchRateThrottle, "THROTTLE_RATES", {"launch": "0/min"})
    refused = throttle(shared, [10.0])
    assert refused.allow_request(launch_request(3), VIEW) is False
    assert refused.wait() == 60
