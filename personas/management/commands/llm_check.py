import asyncio
import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from chaoslm.llm import Callbacks, ChatOptions, LLMError, chat
from chaoslm.llm.endpoints import default_endpoint
from personas.models import Provider


class Command(BaseCommand):
    help = "Send one chat to a provider (default: the default provider) and print the reply, latency and tokens."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--provider", help="a provider's name, as in the admin")
        parser.add_argument("--model", default="", help="the model to ask (default: the provider's)")
        parser.add_argument("--prompt", default="In two sentences, why do people enjoy a good debate?")

    def handle(self, *args: Any, provider: str | None, model: str, prompt: str, **options: Any) -> None:
        if provider:
            row = Provider.objects.filter(name=provider).first()
            if row is None:
                names = ", ".join(Provider.objects.values_list("name", flat=True)) or "none yet"
                raise CommandError(f"no provider is named {provider!r} (known: {names})")
            endpoint = row.endpoint(model)
        else:
            endpoint = default_endpoint(model)
        self.stdout.write(f"Asking {endpoint.name} ({endpoint.model}) at {endpoint.base_url} ...")

        def show(delta: str) -> None:
            sys.stdout.write(delta)
            sys.stdout.flush()

        messages = [{"role": "user", "content": prompt}]
        try:
            result = asyncio.run(
                chat(endpoint, messages, ChatOptions(max_tokens=200), callbacks=Callbacks(on_delta=show))
            )
        except LLMError as error:
            raise CommandError(str(error)) from None
        estimated = " (estimated)" if result.usage_estimated else ""
        self.stdout.write("")
        self.stdout.write(
            f"model {result.model} | latency {result.latency_ms} ms | "
            f"tokens in {result.prompt_tokens}, out {result.completion_tokens}{estimated}"
        )
