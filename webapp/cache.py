"""The cache shared by every web process of a deployment: Django's Redis cache, failing soft.

With `PARASIM_CACHE_URL` set (docs/deployment.md, "Web server"), the per-user launch rate is
one limit for all web processes instead of one per process, and a list page rendered by one
process (`webapp.api.cache`) serves them all. What the cache holds can always be rebuilt, so
a Redis that cannot be reached must not fail a request: a read is then a miss and a write is
skipped, with a warning at most once a minute, and the launch rate is not counted meanwhile.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any, TypeVar

from django.core.cache.backends.base import DEFAULT_TIMEOUT
from django.core.cache.backends.redis import RedisCache, RedisCacheClient
from redis.exceptions import RedisError

logger = logging.getLogger(__name__)

WARN_EVERY_S = 60.0
T = TypeVar("T")
_last_warning = [float("-inf")]


def _soft(fallback: T, call: Callable[[], T]) -> T:
    """Return `call()`, or `fallback` (with a warning now and then) when Redis fails."""
    try:
        return call()
    except (RedisError, OSError):
        now = time.monotonic()
        if now - _last_warning[0] >= WARN_EVERY_S:
            _last_warning[0] = now
            logger.warning("the shared cache is unreachable; serving without it", exc_info=True)
        return fallback


class _ReusedClient(RedisCacheClient):
    """Django's client, keeping one `redis.Redis` per connection pool: Django's builds a new
    one for every cache operation, and each builds its table of ~170 response callbacks
    (about a tenth of a millisecond, twice in every launch's rate check)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._clients: dict[int, Any] = {}

    def get_client(self, key: Any = None, *, write: bool = False) -> Any:
        # Django's own attributes, which django-stubs does not declare.
        pool = self._get_connection_pool(write)  # type: ignore[attr-defined]
        client = self._clients.get(id(pool))
        if client is None:
            client = self._clients[id(pool)] = self._client(connection_pool=pool)  # type: ignore[attr-defined]
        return client


class SharedRedisCache(RedisCache):
    """`RedisCache` whose reads miss and whose writes are skipped while Redis fails."""

    def __init__(self, server: str, params: dict[str, Any]) -> None:
        super().__init__(server, params)
        self._class = _ReusedClient

    def get(self, key: Any, default: Any = None, version: Any = None) -> Any:
        return _soft(default, lambda: super(SharedRedisCache, self).get(key, default, version))

    def get_many(self, keys: Any, version: Any = None) -> dict[Any, Any]:
        return _soft({}, lambda: super(SharedRedisCache, self).get_many(keys, version))

    def has_key(self, key: Any, version: Any = None) -> bool:
        return _soft(False, lambda: super(SharedRedisCache, self).has_key(key, version))

    def set(
        self, key: Any, value: Any, timeout: Any = DEFAULT_TIMEOUT, version: Any = None
    ) -> None:
        _soft(None, lambda: super(SharedRedisCache, self).set(key, value, timeout, version))

    def add(
        self, key: Any, value: Any, timeout: Any = DEFAULT_TIMEOUT, version: Any = None
    ) -> bool:
        return _soft(False, lambda: super(SharedRedisCache, self).add(key, value, timeout, version))

    def set_many(self, data: Any, timeout: Any = DEFAULT_TIMEOUT, version: Any = None) -> list[Any]:
        return _soft(
            list(data), lambda: super(SharedRedisCache, self).set_many(data, timeout, version)
        )

    def touch(self, key: Any, timeout: Any = DEFAULT_TIMEOUT, version: Any = None) -> bool:
        return _soft(False, lambda: super(SharedRedisCache, self).touch(key, timeout, version))

    def delete(self, key: Any, version: Any = None) -> bool:
        return _soft(False, lambda: super(SharedRedisCache, self).delete(key, version))
