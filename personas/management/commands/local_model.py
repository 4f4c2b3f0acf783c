import os
import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from chaoslm.llm import local_model


class Command(BaseCommand):
    help = (
        "Run the embedded model (SmolLM2-135M, or the GGUF CHAOSLM_LOCAL_MODEL names) on llama.cpp's "
        "OpenAI-compatible server, in the foreground."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            command = local_model.command()
        except local_model.LocalModelMissing as error:
            raise CommandError(str(error)) from None
        self.stdout.write(f"Serving {local_model.chosen().label} at {local_model.base_url()}")
        sys.stdout.flush()
        os.execve(command[0], command, local_model.child_environment())  # noqa: S606
