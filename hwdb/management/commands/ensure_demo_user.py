"""`manage.py ensure_demo_user`: make sure the demo account exists and print how to use it."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from rest_framework.authtoken.models import Token

DEMO_USERNAME = "demo"
DEMO_PASSWORD = "parasim-demo"


class Command(BaseCommand):
    help = "Create the demo account (demo / parasim-demo) if absent and print its API token."

    def handle(self, *args: Any, **options: Any) -> None:
        user_model = get_user_model()
        user = user_model.objects.filter(username=DEMO_USERNAME).first()
        if user is None:
            user = user_model.objects.create_user(username=DEMO_USERNAME, password=DEMO_PASSWORD)
            created = "created"
        else:
            created = "exists"
        token, _ = Token.objects.get_or_create(user=user)
        self.stdout.write(
            f"Demo account ({created}): username {DEMO_USERNAME}  password {DEMO_PASSWORD}\n"
            f"API token: {token.key}  (send 'Authorization: Token {token.key}')"
        )
