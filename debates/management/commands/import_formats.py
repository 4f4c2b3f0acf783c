from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from chaoslm import cli
from debates import format_cards


class Command(BaseCommand):
    help = (
        "Import protocol cards (debate formats as YAML, one a file) from files or folders of them. All or nothing: "
        "a bad file imports none, and every problem of every file is listed with its line and field."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("paths", nargs="+", help="YAML files, or folders holding *.yaml / *.yml files")
        group = parser.add_mutually_exclusive_group()
        group.add_argument("--update", action="store_true", help="replace cards that have the same name")
        group.add_argument(
            "--missing",
            action="store_true",
            help="import only cards not in the database yet; keep the others as they are (what `make run` does)",
        )
        parser.add_argument(
            "--owner",
            metavar="USERNAME",
            help="the user the cards belong to (default: nobody: shipped cards, which everyone may use)",
        )

    def handle(self, *args: Any, paths: list[str], update: bool, missing: bool, **options: Any) -> None:
        owner = cli.owner(options["owner"])[0] if options["owner"] else None
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
            saved = format_cards.import_cards(
                [(str(f), f.read_bytes()) for f in files], owner=owner, update=update, missing_only=missing
            )
        except format_cards.CardImportError as error:
            raise CommandError(f"{error}\n(nothing was imported)") from None
        names = f": {', '.join(c.name for c in saved)}" if saved else ""
        kept = "; those already there are kept as they are (--update replaces them)" if missing else ""
        self.stdout.write(self.style.SUCCESS(f"Imported {len(saved)} card(s){names}{kept}"))
