"""Routes of the pages: sign in, sign out, and the application shell at / and /app/..."""

from __future__ import annotations

from django.contrib.auth import views as auth_views
from django.urls import path, re_path

from webapp.accounts.views import LoginView, app_shell

urlpatterns = [
    path("accounts/login/", LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("", app_shell, name="app-home"),
    re_path(r"^app/(?P<path>.*)$", app_shell, name="app"),
]
