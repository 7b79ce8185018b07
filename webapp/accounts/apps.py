"""Django application configuration of the accounts and pages app."""

from __future__ import annotations

from django.apps import AppConfig


class AccountsConfig(AppConfig):
    """Sign-in pages and the browser application's shell."""

    name = "webapp.accounts"
    label = "accounts"
    verbose_name = "Accounts and pages"
