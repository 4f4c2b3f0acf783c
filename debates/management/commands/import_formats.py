from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from chaoslm import cli, yaml_import
from debates import format_cards


class Command(BaseCommand):
    help = (
        "Import protocol cards (debate formats as YAML, one a file) from files or folders of them. All or nothing: "
        "a bad file imports none, and every problem of every file is listed with its line and field."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        yaml_import.add_arguments(parser, "card")
        parser.add_argument(
            "--owner",
            metavar="USERNAME",
            help="the user the cards belong to (default: nobody: shipped cards, which everyone may use)",
        )

    def handle(self, *args: Any, paths: list[str], update: bool, missing: bool, **options: Any) -> None:
        owner = cli.owner(options["owner"])[0] if options["owner"] else None
        files = yaml_import.read_files(paths)
        try:
            saved = format_cards.import_cards(files, owner=owner, update=update, missing_only=missing)
        except format_cards.CardImportError as error:
            raise CommandError(f"{error}\n(nothing was imported)") from None
        line = yaml_import.imported_line([c.name for c in saved], "card", missing=missing)
        self.stdout.write(self.style.SUCCESS(line))
