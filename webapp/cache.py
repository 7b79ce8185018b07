"""The cache shared by every web process of a deployment: Django's Redis cache, failing soft.

With `PARASIM_CACHE_URL` set (docs/deployment.md, "Web server"), the per-user launch rate is
one limit for all web processes instead of one per process, and a list page rendered by one
process (`restapi.cache`) serves them all. What the cache holds can always be rebuilt, so
a Redis that cannot be reached must not fail a request: a read is then a miss and a write is
skipped, with a warning at most once a minute, and the launch rate is not counted meanwhile.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable
from threading import Lock
from typing import Any, TypeVar

from django.core.cache.backends.base import DEFAULT_TIMEOUT
from django.core.cache.backends.locmem import LocMemCache
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


# A sliding-window rate limit counted in one round trip and atomically: the key's sorted set
# holds the instants (scores) of the requests counted within the window. ARGV: now, the window
# (s), the limit, a member unique to this request. Returns {1, count} when this request is
# counted, {0, count, the oldest instant} when the window is full.
_WINDOW_SCRIPT = """
local key = KEYS[1]
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
local count = redis.call('ZCARD', key)
if count >= tonumber(ARGV[3]) then
  return {0, count, redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')[2]}
end
redis.call('ZADD', key, now, ARGV[4])
redis.call('PEXPIRE', key, math.ceil(window * 1000))
return {1, count + 1}
"""


class SharedRedisCache(RedisCache):
    """`RedisCache` whose reads miss and whose writes are skipped while Redis fails."""

    def __init__(self, server: str, params: dict[str, Any]) -> None:
        super().__init__(server, params)
        self._class = _ReusedClient
        self._window_scripts: dict[int, Any] = {}

    def count_in_window(
        self, key: str, *, now: float, window_s: float, limit: int
    ) -> tuple[bool, int, float | None]:
        """Count a request at `now` under `key` unless `limit` requests were counted within
        the last `window_s` seconds, in one atomic round trip (the per-user launch rate,
        `webapp.api.throttling`): return whether it was counted, how many the window then
        holds, and the oldest of them when it was not counted. While Redis fails the request
        is counted as the first (nothing is rate-limited, as the cache's reads miss)."""
        redis_key = self.make_and_validate_key(key)
        member = f"{now!r}:{uuid.uuid4().hex}"

        def run() -> tuple[bool, int, float | None]:
            client = self._cache.get_client(redis_key, write=True)
            script = self._window_scripts.get(id(client))
            if script is None:
                script = self._window_scripts[id(client)] = client.register_script(_WINDOW_SCRIPT)
            answer = script(keys=[redis_key], args=[repr(now), repr(window_s), limit, member])
            counted, count = bool(answer[0]), int(answer[1])
            if counted:
                return True, count, None
            # A limit of 0 refuses with an empty window: no oldest request.
            return False, count, float(answer[2]) if len(answer) > 2 else None

        nothing_counted: tuple[bool, int, float | None] = (True, 1, None)
        return _soft(nothing_counted, run)

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

    def incr(self, key: Any, delta: int = 1, version: Any = None) -> Any:
        # While Redis fails, nothing is counted (as the launch rate's window).
        return _soft(delta, lambda: super(SharedRedisCache, self).incr(key, delta, version))


class ObjectCache(LocMemCache):
    """This process's memory ("local" in settings), keeping the values themselves where
    Django's `LocMemCache` keeps pickled copies: a hit is a dictionary look-up instead of an
    unpickling of a runs page's data or a launch's parsed snapshot. Every reader gets the
    same object, so what is kept here is never
    changed by its readers: rendered bytes; a runs page's data, which the runs list copies
    before adding its queue places; a launch's system model record, exported snapshot and
    parsed snapshot, which the launch and sweep services read and copy (`with_hardware`)."""

    # LocMemCache's own attributes and helpers, which django-stubs does not declare.
    _cache: OrderedDict[str, Any]
    _lock: Lock
    _has_expired: Callable[[str], bool]
    _set: Callable[..., None]
    _delete: Callable[[str], bool]

    def add(
        self, key: Any, value: Any, timeout: Any = DEFAULT_TIMEOUT, version: Any = None
    ) -> bool:
        key = self.make_and_validate_key(key, version=version)
        with self._lock:
            if self._has_expired(key):
                self._set(key, value, timeout)
                return True
            return False

    def get(self, key: Any, default: Any = None, version: Any = None) -> Any:
        key = self.make_and_validate_key(key, version=version)
        with self._lock:
            if self._has_expired(key):
                self._delete(key)
                return default
            value = self._cache[key]
            self._cache.move_to_end(key, last=False)
        return value

    def set(
        self, key: Any, value: Any, timeout: Any = DEFAULT_TIMEOUT, version: Any = None
    ) -> None:
        key = self.make_and_validate_key(key, version=version)
        with self._lock:
            self._set(key, value, timeout)

    def incr(self, key: Any, delta: int = 1, version: Any = None) -> Any:
        key = self.make_and_validate_key(key, version=version)
        with self._lock:
            if self._has_expired(key):
                self._delete(key)
                raise ValueError(f"Key '{key}' not found")
            value = self._cache[key] + delta
            self._cache[key] = value
            self._cache.move_to_end(key, last=False)
        return value
