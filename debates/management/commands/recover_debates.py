from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from debates.recovery import recover


class Command(BaseCommand):
    help = "Resume debates that say they are running but made no progress for a while (CHAOSLM_STALLED_AFTER)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--older-than", type=float, help="seconds without progress (default: the setting)")

    def handle(self, *args: Any, older_than: float | None, **options: Any) -> None:
        ids = recover(older_than)
        self.stdout.write(f"Resumed {len(ids)} debate(s){': ' + ', '.join(map(str, ids)) if ids else ''}.")
