from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from debates import format_cards
from debates.models import FormatCard


class Command(BaseCommand):
    help = (
        "Export protocol cards as YAML files, one a card, named after the card (NAME.yaml), as import_formats reads "
        "them. With one card and no --out, its YAML goes to standard output."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("names", nargs="*", metavar="NAME", help="the cards to export (default: every card)")
        parser.add_argument("--out", metavar="DIR", help="the folder to write them to (made if missing)")

    def handle(self, *args: Any, names: list[str], out: str | None, **options: Any) -> None:
        cards = FormatCard.objects.all()
        if names:
            cards = cards.filter(name__in=names)
            missing = sorted(set(names) - set(cards.values_list("name", flat=True)))
            if missing:
                raise CommandError(f"there is no card called {', '.join(missing)}")
        found = list(cards.order_by("name"))
        if not found:
            raise CommandError("there are no cards to export (import_formats cards/ loads the shipped ones)")
        if out is None:
            if len(found) != 1:
                raise CommandError("several cards go to a folder: add --out DIR")
            self.stdout.write(found[0].yaml, ending="" if found[0].yaml.endswith("\n") else "\n")
            return
        folder = Path(out)
        folder.mkdir(parents=True, exist_ok=True)
        for card in found:
            (folder / format_cards.file_name(card)).write_text(card.yaml, encoding="utf-8")
        self.stdout.write(
            self.style.SUCCESS(f"Wrote {len(found)} card(s) to {folder}: {', '.join(c.name for c in found)}")
        )
