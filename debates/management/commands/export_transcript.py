from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from debates import privacy, transcripts
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
            help="what a share link exports: no prompt (prompts may quote private notes), and the debaters' "
            "private thinking only if the owner shows it to viewers",
        )

    def handle(self, *args: Any, debate_id: int, format: str, output: str | None, public: bool, **options: Any) -> None:
        debate = Debate.objects.filter(pk=debate_id).first()
        if debate is None:
            raise CommandError(f"there is no debate {debate_id}")
        render = transcripts.as_markdown if format == "md" else transcripts.as_json
        text = render(debate, access=privacy.viewers_access(debate) if public else privacy.EVERYTHING)
        if output:
            Path(output).write_text(text, encoding="utf-8")
            self.stdout.write(f"Wrote {output}")
        else:
            self.stdout.write(text, ending="" if text.endswith("\n") else "\n")
