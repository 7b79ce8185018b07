"""Page views: sign-in (throttled against password guessing), the API's token request (the
same throttle), and the browser application's shell, built by Vite from frontend/.

The shell is one HTML page for every path under /app/; the JavaScript bundle routes inside
it and talks to the REST API only. Asset names come from Vite's manifest
(frontend/dist/.vite/manifest.json), so a rebuild needs no template change.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import AuthenticationForm
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.csrf import ensure_csrf_cookie
from rest_framework import exceptions
from rest_framework.authtoken.models import Token
from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.request import Request
from rest_framework.response import Response

from webapp.accounts.throttling import (
    client_address,
    login_failure_record,
    login_success_record,
    login_wait_s,
    throttled_message,
)

ENTRY = "src/main.jsx"
NOT_BUILT = (
    "The front end is not built: run `npm ci && npm run build` in frontend/ "
    "(./studio run does it for you)."
)


def manifest_path() -> Path:
    """Return the path of Vite's build manifest."""
    return Path(settings.BASE_DIR) / "frontend" / "dist" / ".vite" / "manifest.json"


def entry_assets(manifest: dict[str, Any], entry: str = ENTRY) -> dict[str, list[str]]:
    """Return the script and stylesheet files (relative to the static root) of `entry`.

    Stylesheets of statically imported chunks are included, in import order.
    """
    scripts: list[str] = []
    styles: list[str] = []
    seen: set[str] = set()

    def visit(name: str) -> None:
        if name in seen or name not in manifest:
            return
        seen.add(name)
        chunk = manifest[name]
        for imported in chunk.get("imports", []):
            visit(imported)
        styles.extend(css for css in chunk.get("css", []) if css not in styles)

    visit(entry)
    if entry in manifest:
        scripts.append(manifest[entry]["file"])
    return {"scripts": scripts, "styles": styles}


@ensure_csrf_cookie
@login_required
def app_shell(request: HttpRequest, path: str = "") -> HttpResponse:
    """Return the single-page application's HTML shell (503 when the bundle is not built)."""
    try:
        manifest = json.loads(manifest_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return HttpResponse(NOT_BUILT, status=503, content_type="text/plain; charset=utf-8")
    return render(request, "spa.html", {"assets": entry_assets(manifest)})


class ThrottledLoginMixin:
    """A sign-in form (Django's `AuthenticationForm` or one built on it) refusing while the
    username or the address is throttled (`webapp.accounts.throttling`) and counting each
    wrong password."""

    throttled = False
    cleaned_data: dict[str, Any]
    request: Any

    def clean(self) -> dict[str, Any]:
        username = str(self.cleaned_data.get("username") or "")
        address = client_address(self.request)
        wait_s = login_wait_s(username=username, address=address)
        if wait_s is not None:
            self.throttled = True
            raise ValidationError(throttled_message(wait_s), code="throttled")
        try:
            cleaned: dict[str, Any] = super().clean()  # type: ignore[misc]
        except ValidationError:
            if username and self.cleaned_data.get("password"):
                login_failure_record(username=username, address=address)
            raise
        login_success_record(username=username)
        return cleaned


class ThrottledAuthenticationForm(ThrottledLoginMixin, AuthenticationForm):
    """The sign-in page's form."""


class ThrottledAdminAuthenticationForm(ThrottledLoginMixin, AdminAuthenticationForm):
    """The admin site's sign-in form (`admin.site.login_form`): the same passwords, the same
    counts."""


class LoginView(auth_views.LoginView):
    """The sign-in page; a throttled sign-in answers 429 with the form saying why."""

    authentication_form = ThrottledAuthenticationForm
    redirect_authenticated_user = True

    def form_invalid(self, form: Any) -> HttpResponse:
        response = super().form_invalid(form)
        if getattr(form, "throttled", False):
            response.status_code = 429
        return response


class ObtainAuthTokenView(ObtainAuthToken):
    """DRF's token request (username and password in, token out), refused with 429 and
    Retry-After while the username or the address is throttled."""

    def post(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        data = request.data if isinstance(request.data, Mapping) else {}
        username = str(data.get("username") or "")
        address = client_address(request)
        wait_s = login_wait_s(username=username, address=address)
        if wait_s is not None:
            raise exceptions.Throttled(wait=wait_s, detail=throttled_message(wait_s))
        serializer = self.get_serializer(data=request.data)
        try:
            serializer.is_valid(raise_exception=True)
        except exceptions.ValidationError:
            if username and data.get("password"):
                login_failure_record(username=username, address=address)
            raise
        login_success_record(username=username)
        user = serializer.validated_data["user"]
        token, _created = Token.objects.get_or_create(user=user)
        return Response({"token": token.key})
