"""django-ninja's `export_openapi_schema`, which ninja's own app provided while `ninja` was in INSTALLED_APPS
(config/settings.py says why it no longer is). Without `--api` it exports ours (`api.main.api`): ninja's own
default looks for an API at /api/, where there is none, and ended in a traceback."""

from __future__ import annotations

from ninja.main import NinjaAPI
from ninja.management.commands.export_openapi_schema import Command as NinjaCommand

DEFAULT_API = "api.main.api"


class Command(NinjaCommand):
    help = f"Exports the API's OpenAPI schema (--api defaults to {DEFAULT_API})"

    def _get_api_instance(self, api_path: str | None = None) -> NinjaAPI:
        return super()._get_api_instance(api_path or DEFAULT_API)
