import asyncio
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from debates.engine import run_debate
from debates.models import Debate
from debates.services import end_debate


class Command(BaseCommand):
    help = (
        "End a debate early: its format closes it (the moderator's summary, the judge's verdict). "
        "A debate running elsewhere picks this up at its next step; one that is not running is run to its close here."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("debate_id", type=int)

    def handle(self, *args: Any, debate_id: int, **options: Any) -> None:
        debate = Debate.objects.filter(pk=debate_id).first()
        if debate is None:
            raise CommandError(f"there is no debate {debate_id}")
        if debate.status == Debate.Status.COMPLETED:
            raise CommandError(f"debate {debate_id} is already complete")
        debate = end_debate(debate_id)
        if debate.status == Debate.Status.RUNNING:
            self.stdout.write(f"Debate {debate_id} will close at its next step.")
            return
        debate = asyncio.run(run_debate(debate_id))
        self.stdout.write(f"Debate {debate_id} {debate.get_status_display()}.")
