import os
import secrets
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandParser


class Command(BaseCommand):
    help = "Create the admin login if it does not exist yet, and print it."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--username", default=os.environ.get("CHAOSLM_ADMIN_USER", "admin"))

    def handle(self, *args: Any, username: str, **options: Any) -> None:
        User = get_user_model()
        if User.objects.filter(username=username).exists():
            self.stdout.write(
                f"Admin login: {username} (already exists; its password is unchanged. "
                f"To set a new one: uv run python manage.py changepassword {username})"
            )
            return
        password = os.environ.get("CHAOSLM_ADMIN_PASSWORD") or secrets.token_urlsafe(12)
        User.objects.create_superuser(username=username, email="", password=password)
        self.stdout.write(self.style.SUCCESS(f"Admin login created: username {username}  password {password}"))
