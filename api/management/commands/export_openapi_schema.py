"""django-ninja's `export_openapi_schema` (`--api api.main.api`), which ninja's own app provided while `ninja` was
in INSTALLED_APPS (chaoslm/settings.py says why it no longer is)."""

from ninja.management.commands.export_openapi_schema import Command

__all__ = ["Command"]
