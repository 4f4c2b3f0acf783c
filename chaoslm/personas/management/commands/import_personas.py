from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from chaoslm.personas.models import import_personas
from chaoslm.personas.yaml_io import PersonaYAMLError


class Command(BaseCommand):
    help = "Import personas from YAML files or folders of them. All or nothing: a bad file imports none."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("paths", nargs="+", help="YAML files, or folders holding *.yaml / *.yml files")
        group = parser.add_mutually_exclusive_group()
        group.add_argument("--update", action="store_true", help="replace personas that have the same name")
        group.add_argument(
            "--missing",
            action="store_true",
            help="import only personas not in the database yet; keep the others as they are (what `make run` does)",
        )

    def handle(self, *args: Any, paths: list[str], update: bool, missing: bool, **options: Any) -> None:
        files: list[Path] = []
        for raw in paths:
            path = Path(raw)
            if path.is_dir():
                files.extend(sorted([*path.glob("*.yaml"), *path.glob("*.yml")]))
            elif path.is_file():
                files.append(path)
            else:
                raise CommandError(f"{raw}: no such file or folder")
        if not files:
            raise CommandError("no YAML files found")
        try:
            saved = import_personas([(str(f), f.read_bytes()) for f in files], update=update, missing_only=missing)
        except PersonaYAMLError as error:
            raise CommandError(f"{error} (nothing was imported)") from None
        names = f": {', '.join(p.name for p in saved)}" if saved else ""
        kept = "; those already there are kept as they are (--update replaces them)" if missing else ""
        self.stdout.write(self.style.SUCCESS(f"Imported {len(saved)} persona(s){names}{kept}"))
