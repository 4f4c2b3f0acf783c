from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from debates import transcripts
from debates.models import Debate


class Command(BaseCommand):
    help = "Write a debate's transcript as Markdown or JSON (to stdout, or to --output)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("debate_id", type=int)
        parser.add_argument("--format", choices=["md", "json"], default="md")
        parser.add_argument("--output", help="a file to write instead of printing")
        parser.add_argument(
            "--public",
            action="store_true",
            help="leave out private events and every prompt (prompts may quote private notes)",
        )

    def handle(self, *args: Any, debate_id: int, format: str, output: str | None, public: bool, **options: Any) -> None:
        debate = Debate.objects.filter(pk=debate_id).first()
        if debate is None:
            raise CommandError(f"there is no debate {debate_id}")
        render = transcripts.as_markdown if format == "md" else transcripts.as_json
        text = render(debate, include_private=not public)
        if output:
            Path(output).write_text(text, encoding="utf-8")
            self.stdout.write(f"Wrote {output}")
        else:
            self.stdout.write(text, ending="" if text.endswith("\n") else "\n")
