from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from chaoslm import yaml_import
from personas.models import import_personas
from personas.yaml_io import PersonaYAMLError


class Command(BaseCommand):
    help = "Import personas from YAML files or folders of them. All or nothing: a bad file imports none."

    def add_arguments(self, parser: CommandParser) -> None:
        yaml_import.add_arguments(parser, "persona")

    def handle(self, *args: Any, paths: list[str], update: bool, missing: bool, **options: Any) -> None:
        files = yaml_import.read_files(paths)
        try:
            saved = import_personas(files, update=update, missing_only=missing)
        except PersonaYAMLError as error:
            raise CommandError(f"{error} (nothing was imported)") from None
        line = yaml_import.imported_line([p.name for p in saved], "persona", missing=missing)
        self.stdout.write(self.style.SUCCESS(line))
