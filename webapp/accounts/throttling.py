"""Brute-force throttling of sign-in: the API's token request and the sign-in page.

Wrong passwords are counted per username and per client address in fixed windows of
PARASIM_LOGIN_WINDOW_S, in the default cache (shared by the web processes where
PARASIM_CACHE_URL names a Redis). Once either count reaches its limit
(PARASIM_LOGIN_FAILURES_PER_USERNAME, PARASIM_LOGIN_FAILURES_PER_ADDRESS), every sign-in for
that username or from that address is refused until the window ends, a right password
included: otherwise the refusal itself would not stop the guessing. A right password clears
its username's count. The client address is REMOTE_ADDR, or what DRF's NUM_PROXIES setting
reads from X-Forwarded-For where it names the proxies in front: an unset NUM_PROXIES must
not let a client pick its own address.
"""

from __future__ import annotations

import hashlib
import math
import time
from typing import Any

from django.conf import settings
from django.core.cache import cache
from rest_framework.settings import api_settings
from rest_framework.throttling import BaseThrottle

MESSAGES = {
    "throttled": (
        "Too many failed sign-ins for this username or from this address; try again in "
        "{minutes} minute(s)."
    ),
}
KEY_PREFIX = "login-failures"


def client_address(request: Any) -> str:
    """Return the address of the client that sent `request` (see the module's docstring)."""
    if api_settings.NUM_PROXIES is not None:
        return str(BaseThrottle().get_ident(request))
    return str(request.META.get("REMOTE_ADDR", ""))


def _keys(*, username: str, address: str) -> list[tuple[str, int]]:
    """Return the cache key and limit of each count a sign-in attempt falls under."""
    name = hashlib.sha256(username.strip().casefold().encode()).hexdigest()
    place = hashlib.sha256(address.encode()).hexdigest()
    return [
        (f"{KEY_PREFIX}:username:{name}", int(settings.PARASIM_LOGIN_FAILURES_PER_USERNAME)),
        (f"{KEY_PREFIX}:address:{place}", int(settings.PARASIM_LOGIN_FAILURES_PER_ADDRESS)),
    ]


def login_wait_s(*, username: str, address: str) -> int | None:
    """Return the seconds until a sign-in for `username` from `address` is accepted again,
    or None when it may be tried now."""
    window_s = float(settings.PARASIM_LOGIN_WINDOW_S)
    now = time.time()
    waits = []
    for key, limit in _keys(username=username, address=address):
        counted = cache.get_many([key, f"{key}:start"])
        if int(counted.get(key) or 0) < limit:
            continue
        started = float(counted.get(f"{key}:start", now))
        if now < started + window_s:  # else the cache has yet to drop the ended window
            waits.append(max(math.ceil(started + window_s - now), 1))
    return max(waits) if waits else None


def login_failure_record(*, username: str, address: str) -> None:
    """Count a wrong password for `username` from `address`, atomically where the cache
    counts atomically (Redis, and the memory cache of one process)."""
    window_s = math.ceil(float(settings.PARASIM_LOGIN_WINDOW_S))
    for key, _limit in _keys(username=username, address=address):
        # The first failure starts the window: both keys end with it.
        cache.add(f"{key}:start", time.time(), timeout=window_s)
        cache.add(key, 0, timeout=window_s)
        try:
            cache.incr(key)
        except ValueError:  # the window ended between the two calls
            cache.set(key, 1, timeout=window_s)


def login_success_record(*, username: str) -> None:
    """Clear the count of wrong passwords for `username` after a right one."""
    key, _limit = _keys(username=username, address="")[0]
    cache.delete(key)


def throttled_message(wait_s: int) -> str:
    """Return what a refused sign-in says."""
    return MESSAGES["throttled"].format(minutes=max(math.ceil(wait_s / 60), 1))
