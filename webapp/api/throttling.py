"""The per-user launch rate (PARASIM_LAUNCH_RATE, DRF's "launch" scope) as DRF counts it, a
sliding window of the user's launches, kept where the web processes share it.

DRF's `SimpleRateThrottle` reads the user's list of launch times from the cache and writes it
back: two round trips to Redis and a pickled list per launch, and two processes launching for
one user at once may each count from the same list and lose a launch. With the shared Redis
cache (`webapp.cache.SharedRedisCache`) the window is one sorted set per user, trimmed, counted
and added to by one script, atomically; with a cache in each process's memory (the embedded
default), DRF's own code counts.
"""

from __future__ import annotations

from typing import Any

from rest_framework.throttling import ScopedRateThrottle

from webapp.cache import SharedRedisCache


class LaunchRateThrottle(ScopedRateThrottle):
    """DRF's `ScopedRateThrottle`, counted in one atomic Redis round trip where the cache is
    the shared Redis cache."""

    def allow_request(self, request: Any, view: Any) -> bool:
        backend = self.cache
        if not isinstance(backend, SharedRedisCache):
            return bool(super().allow_request(request, view))
        # What ScopedRateThrottle.allow_request sets before counting.
        self.scope = getattr(view, self.scope_attr, None)
        if not self.scope:
            return True
        self.rate = self.get_rate()
        self.num_requests, self.duration = self.parse_rate(self.rate)
        self.key = self.get_cache_key(request, view)
        if self.num_requests is None or self.duration is None or self.key is None:
            return True
        self.now = self.timer()
        counted, count, oldest = backend.count_in_window(
            f"{self.key}:window", now=self.now, window_s=self.duration, limit=self.num_requests
        )
        if not counted:  # what DRF's `wait` reads: the window's count and its oldest time
            self.history = [self.now if oldest is None else oldest] * count
        return counted
