"""URL configuration: admin, REST API under /api/ with token auth and offline docs, health check,
sign-in pages and the browser application (webapp.accounts)."""

from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest, JsonResponse
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerView

from webapp.accounts.views import ObtainAuthTokenView, ThrottledAdminAuthenticationForm


def healthz(request: HttpRequest) -> JsonResponse:
    """Return 200 when the web process is up (used by CI and docker-compose health checks)."""
    return JsonResponse({"status": "ok"})


# The admin's sign-in counts wrong passwords as the other two do (webapp.accounts.throttling).
admin.site.login_form = ThrottledAdminAuthenticationForm

urlpatterns = [
    path("admin/", admin.site.urls),
    path("healthz", healthz, name="healthz"),
    path("api/auth/token/", ObtainAuthTokenView.as_view(), name="api-token"),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="swagger-ui"),
    path("api/redoc/", SpectacularRedocView.as_view(url_name="schema"), name="redoc"),
    path("api/", include("hwdb.api.urls")),
    path("api/", include("webapp.studio.api.urls")),
    path("", include("webapp.accounts.urls")),
]
