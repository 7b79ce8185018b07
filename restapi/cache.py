"""List responses kept in Django's cache, keyed on a version of what they show.

A list whose records change seldom and are read often (the hardware catalogue) is rendered
once per version and served as those bytes afterwards: no page query, no serializing, no JSON
encoding. The version is a value the caller reads cheaply from the database on every request
(`hwdb.selectors.component_list_version`) that changes with every write of the listed records,
so a write is seen by the next request, in every process. Entries also expire after
`RESPONSE_CACHE_SECONDS`, which bounds how long a change the version does not see (a username
renamed in the admin) may stay on the page.

`cached_response` keeps JSON renderings (the browsable API renders as usual); `cached` keeps
a page's data, for a list that completes it on every request (the runs list's queue places).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Any, TypeVar

from django.core.cache import cache, caches
from rest_framework.response import Response

from restapi.renderers import JSONRenderer

if TYPE_CHECKING:
    from rest_framework.views import APIView

RESPONSE_CACHE_SECONDS = 30
KEY_PREFIX = "parasim:response:"
T = TypeVar("T")


class RenderedResponse(Response):
    """A response whose body the view's accepted JSON renderer has already rendered; its
    `data` (read by tests and the test client) is that body decoded, when asked for."""

    def __init__(self, content: bytes) -> None:
        self.prerendered = content
        super().__init__()

    @property
    def data(self) -> Any:
        return json.loads(self.prerendered)

    @data.setter
    def data(self, value: Any) -> None:
        # Response.__init__ sets `data`; the body is what was rendered.
        pass

    @property
    def rendered_content(self) -> bytes:  # type: ignore[override]
        # What Response.rendered_content sets for a JSON renderer (whose charset is None).
        self["Content-Type"] = self.content_type or self.accepted_renderer.media_type
        return self.prerendered


def cache_key(view: APIView, version: Hashable) -> str:
    """Return the cache key of the view's response at `version`: the full URL (scheme, host,
    query: the pagination links hold them) and the accepted media type (`indent=`) count."""
    request = view.request
    identity = repr((version, request.build_absolute_uri(), request.accepted_media_type))
    return KEY_PREFIX + hashlib.sha256(identity.encode()).hexdigest()


def cached(view: APIView, *, version: Hashable, build: Callable[[], T]) -> T:
    """Return `build()` from the cache when this URL was built at this `version` before,
    building and keeping it otherwise (a value the cache can pickle).

    An entry never changes under its key (the version is part of it), so each process also
    keeps the entries it used in its own memory (the "local" cache), in front of the cache
    shared by the processes ("default": Redis in a deployment): a hit then costs no round trip
    to Redis, and a page is still built once for all processes. An entry lives
    half of RESPONSE_CACHE_SECONDS in each, so the bound on what the version does not see holds.
    """
    key = cache_key(view, version)
    local = caches["local"]
    value = local.get(key)
    if value is None:
        value = cache.get(key)
        if value is None:
            value = build()
            cache.set(key, value, RESPONSE_CACHE_SECONDS / 2)
        local.set(key, value, RESPONSE_CACHE_SECONDS / 2)
    return value


def cached_response(view: APIView, *, version: Hashable, build: Callable[[], Any]) -> Response:
    """Return the response of `build()` (the response's data) rendered as JSON, from the
    cache when this URL was rendered at this `version` before, rendering and keeping it
    otherwise. `version` None, or a renderer other than JSON, bypasses the cache."""
    request = view.request
    renderer = request.accepted_renderer
    if version is None or type(renderer) is not JSONRenderer:
        return Response(build())
    content = cached(
        view,
        version=version,
        build=lambda: renderer.render(
            build(), request.accepted_media_type, view.get_renderer_context()
        ),
    )
    return RenderedResponse(content)
