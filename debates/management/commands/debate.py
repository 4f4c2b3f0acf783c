from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from chaoslm import cli, limits, runner
from chaoslm.http import NumberError, parse_number
from chaoslm.llm import local_model
from debates import format_cards, hold
from debates import limits as debate_limits
from debates.engine import DebateDeleted, RunStats, run_debate
from debates.formats import LISTED, FormatError
from debates.formats.base import seat_empty
from debates.models import Debate, Event
from debates.services import let_run, post_message
from debates.setup import SeatChoice, create_debate, debate_problems
from personas.models import Persona
from personas.yaml_io import PersonaYAMLError, parse_personas

if TYPE_CHECKING:
    from rich.console import Console


def persona_choice(value: str) -> SeatChoice:
    """A persona's name in the database, or the path of a YAML file holding one persona."""
    path = Path(value)
    if path.suffix in (".yaml", ".yml") or path.is_file():
        if not path.is_file():
            raise CommandError(f"{value}: no such persona file")
        try:
            specs = parse_personas(path.read_bytes(), str(path))
        except PersonaYAMLError as error:
            raise CommandError(str(error)) from None
        if len(specs) != 1:
            raise CommandError(f"{value} holds {len(specs)} personas; a seat needs a file with one")
        return SeatChoice(spec=specs[0])
    persona = Persona.objects.filter(name=value).first() or Persona.objects.filter(name__iexact=value).first()
    if persona is None:
        known = ", ".join(Persona.objects.values_list("name", flat=True)) or "none yet: run import_personas"
        raise CommandError(f"no persona is named {value!r} (known: {known}); or give a YAML file path")
    return SeatChoice(persona=persona)


def read_material(value: str) -> str:
    """The text of a material file, read as UTF-8."""
    path = Path(value)
    try:
        return path.read_bytes().decode("utf-8-sig")
    except OSError as error:
        raise CommandError(f"{value}: {error.strerror or error}") from None
    except UnicodeDecodeError as error:
        raise CommandError(f"{value} is not UTF-8 text (byte {error.start + 1} is not UTF-8)") from None


def key_value(raw: str) -> tuple[str, str]:
    key, sep, value = raw.partition("=")
    if not sep or not key:
        raise CommandError(f"expected KEY=VALUE, not {raw!r}")
    return key.strip(), value.strip()


class Command(BaseCommand):
    help = "Run a debate in the terminal, streaming it live. Ctrl-C stops it; --resume ID continues it."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "format",
            nargs="?",
            help=f"the debate format ({', '.join(sorted(LISTED))}) or the name of a protocol card (import_formats)",
        )
        parser.add_argument("--topic", default="")
        parser.add_argument("--premise", default="")
        material = parser.add_mutually_exclusive_group()
        material.add_argument(
            "--material",
            metavar="TEXT",
            default="",
            help="what the debate carries beyond its topic (a passage, a question with its candidate answers), "
            f"at most {settings.CHAOSLM_MAX_MATERIAL:,} characters",
        )
        material.add_argument("--material-file", metavar="PATH", help="the material from a UTF-8 text file")
        parser.add_argument("--turns", type=int, help="duel: public statements in all (default 6)")
        parser.add_argument("--a", help="duel: debater A (for), a persona name or YAML file")
        parser.add_argument("--b", help="duel: debater B (against), a persona name or YAML file")
        parser.add_argument("--judge", help="duel: the judge (leave out for no judge)")
        parser.add_argument(
            "--seat",
            action="append",
            default=[],
            metavar="KEY=PERSONA",
            help="any seat of any format, e.g. --seat moderator='Sam Reyes'",
        )
        parser.add_argument(
            "--option",
            action="append",
            default=[],
            metavar="NAME=NUMBER",
            help="a format option, e.g. --option max_rounds=3",
        )
        parser.add_argument(
            "--word-limit", type=int, help="truncate statements to this many words (structured: every response)"
        )
        parser.add_argument("--resume", type=int, metavar="ID", help="continue an interrupted or failed debate")
        parser.add_argument("--json", action="store_true", help="print events as JSON lines instead")
        parser.add_argument("--hide-private", action="store_true", help="do not print PLAN and THINK text")
        parser.add_argument(
            "--visibility",
            choices=["private", "unlisted", "public"],
            default="private",
            help="who may watch it in the browser (default: private)",
        )
        parser.add_argument(
            "--private-thinking",
            action="store_true",
            help="keep the private thinking (PLAN, THINK) from viewers other than the owner and staff",
        )
        cli.add_owner_argument(parser, "debate")
        parser.add_argument(
            "--no-poll",
            action="store_true",
            help="no audience vote before and after (on by default; shown once the debate is public or unlisted)",
        )
        parser.add_argument(
            "--hold",
            default="0",
            metavar="MINUTES",
            help="hold the start this many minutes so an audience can gather and vote (the page counts down; "
            f"default 0, at most {settings.CHAOSLM_HOLD_MAX_MINUTES})",
        )
        parser.add_argument(
            "--enqueue",
            action="store_true",
            help="start it on the configured runner (the Celery workers) and print its id",
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        cli.stop_on_sigterm()
        if opts["resume"]:
            debate = Debate.objects.filter(pk=opts["resume"]).select_related("owner").first()
            if debate is None:
                raise CommandError(f"there is no debate {opts['resume']}")
            if debate.status == Debate.Status.COMPLETED:
                raise CommandError(f"debate {debate.pk} is already complete")
            if debate.status != Debate.Status.RUNNING:
                self.check_limits(debate.owner)
            let_run(debate.pk)
        else:
            if opts["enqueue"]:
                cli.refuse_enqueue_inline()
            owner, whose = cli.owner(opts["owner"])
            with limits.starting(owner):
                self.check_limits(owner)
                debate = self.create(opts, owner)
            # With --json, stdout carries the events alone.
            out = self.stderr if opts["json"] else self.stdout
            for line in (whose, *cli.addresses(debate)):
                out.write(line)
        if opts["enqueue"]:
            if debate.held():
                hold.schedule(debate)
            else:
                runner.submit("debate", debate.pk)
            self.stdout.write(str(debate.pk))
            return
        if debate.held() and not self.wait_for_start(debate, self.stderr if opts["json"] else self.stdout):
            return
        try:
            with local_model.running((self.stderr if opts["json"] else self.stdout).write):
                self.run(debate, json_lines=opts["json"], show_private=not opts["hide_private"])
        except local_model.LocalModelMissing as error:
            raise CommandError(
                f"{error}\nDebate {debate.pk} is saved: once a model answers, run it with "
                f"uv run python manage.py debate --resume {debate.pk}"
            ) from None
        except KeyboardInterrupt as stop:  # outside the run: while the embedded model started, say
            self.stop(debate, stop)
        finally:
            # Its end told the owner's webhooks: those deliveries run in this process.
            cli.settle(self.stderr.write)

    def wait_for_start(self, debate: Debate, out: Any) -> bool:
        """Sit out the debate's hold here, then take its start (False: its page's "Start now" started it
        elsewhere, on the web server's runner)."""
        starts = timezone.localtime(debate.starts_at)
        out.write(f"Held until {starts:%H:%M:%S %Z} so an audience can gather; its page counts down. Ctrl-C stops.")
        try:
            # Each second: the owner may start it sooner from its page.
            while (left := hold.seconds_left(debate.pk)) is not None and left > 0:
                time.sleep(min(left, 1.0))
        except KeyboardInterrupt as stop:
            self.stop(debate, stop)
        if left is None or not hold.claim(debate.pk):
            out.write("It was started from its page; it runs there.")
            return False
        return True

    def stop(self, debate: Debate, stop: KeyboardInterrupt) -> NoReturn:
        """Ctrl-C or SIGTERM: one plain line (no "CommandError:", which reads as a failure), and the shell's status
        for the signal. The run was this process's own (its calls in flight dropped, what landed kept): nothing
        carries on elsewhere, and no sweep resumes an interrupted debate."""
        self.stderr.write(
            f"\nStopped ({cli.signal_name(stop)}): debate {debate.pk} waits, what it said kept. "
            f"Resume it with: uv run python manage.py debate --resume {debate.pk}"
        )
        sys.exit(cli.exit_status(stop))

    def check_limits(self, owner: Any) -> None:
        try:
            debate_limits.check_start(owner)
        except limits.LimitReached as error:
            raise CommandError(f"{owner.get_username()}: {error}") from None

    def create(self, opts: dict[str, Any], owner: Any = None) -> Debate:
        if not opts["format"]:
            raise CommandError("name a format (" + ", ".join(sorted(LISTED)) + ") or use --resume ID")
        try:
            chosen = format_cards.resolve(owner, opts["format"])
        except FormatError as error:
            raise CommandError(str(error)) from None
        fmt = chosen.fmt
        # Every problem at once, as the form and the API tell them: the command's own (a persona not found, a
        # value that is not a number) with the debate's (docs/cards.md).
        problems: list[str] = []
        seats: dict[str, SeatChoice] = {}
        unfound: set[str] = set()  # seats whose persona was not found: that is their problem, not "empty"
        named = [(key, opts[key]) for key in ("a", "b", "judge") if opts[key]]
        for raw in opts["seat"]:
            try:
                named.append(key_value(raw))
            except CommandError as error:
                problems.append(str(error))
        for key, value in named:
            try:
                seats[key] = (
                    SeatChoice(human_name=value[len("human:") :] or "You")
                    if value.startswith("human:")
                    else persona_choice(value)
                )
            except CommandError as error:
                problems.append(str(error))
                unfound.add(key)
        hold_minutes = 0
        try:
            hold_minutes = parse_number(opts["hold"], "--hold", high=settings.CHAOSLM_HOLD_MAX_MINUTES)
        except NumberError as error:
            problems.append(str(error))
        options: dict[str, Any] = {}
        if opts["turns"] is not None:
            options["turns"] = opts["turns"]
        if opts["word_limit"] is not None:
            options["word_limit"] = opts["word_limit"]
        for raw in opts["option"]:
            try:
                key, value = key_value(raw)
                options[key] = int(value)
            except CommandError as error:
                problems.append(str(error))
            except ValueError:
                problems.append(f"option {key} must be a whole number, not {value!r}")
        material = opts["material"]
        if opts["material_file"]:
            try:
                material = read_material(opts["material_file"])
            except CommandError as error:
                problems.append(str(error))
        order = [s.key for s in fmt.seat_specs]
        seats = dict(sorted(seats.items(), key=lambda kv: order.index(kv[0]) if kv[0] in order else len(order)))
        # The format would say only "The Negative seat is empty."; here the person also needs the flag that fills it.
        flagged = {
            seat_empty(spec): f"The {spec.label} seat is empty: fill it with "
            + (f"--{spec.key} PERSONA." if fmt.name == "duel" else f"--seat {spec.key}=PERSONA.")
            for spec in fmt.seat_specs
        }
        unfound_empty = {seat_empty(spec) for spec in fmt.seat_specs if spec.key in unfound}
        found = debate_problems(
            format_name=fmt.name,
            topic=opts["topic"],
            premise=opts["premise"],
            material=material,
            seats=seats,
            options=options,
            hold_minutes=hold_minutes,
            card_source=chosen.card_source,
        )
        problems += [flagged.get(p, p) for p in found if p not in unfound_empty]
        if problems:
            raise CommandError("\n".join(problems))
        try:
            return create_debate(
                format_name=fmt.name,
                topic=opts["topic"],
                premise=opts["premise"],
                material=material,
                seats=seats,
                options=options,
                owner=owner,
                visibility=opts["visibility"],
                show_thinking=not opts["private_thinking"],
                audience_poll=not opts["no_poll"],
                hold_minutes=hold_minutes,
                card_source=chosen.card_source,
            )
        except FormatError as error:
            raise CommandError(str(error)) from None

    def take_human_turn(self, debate: Debate, console: Console) -> None:
        seat = debate.seats.get(is_human=True)
        while True:
            console.print(f"\nYour turn, {seat.name}. Type your message and press Enter:", style="bold green")
            try:
                text = input("> ")
            except EOFError:
                raise CommandError(
                    f"no message given. Resume with: uv run python manage.py debate --resume {debate.pk}"
                ) from None
            try:
                post_message(debate.pk, text)
                return
            except FormatError as error:
                console.print(str(error), style="yellow")

    def run(self, debate: Debate, *, json_lines: bool, show_private: bool) -> None:
        # Imported here: rich is a good part of the command's start, and `debate --help` should be quick.
        from rich.console import Console

        from debates.broadcast import AlsoLive
        from debates.terminal import JsonLinesObserver, TerminalObserver, print_verdict

        console = Console(file=self.stdout._out if hasattr(self.stdout, "_out") else sys.stdout)
        seats = list(debate.seats.all())
        if json_lines:
            observer = JsonLinesObserver(console.file, {s.pk: s.key for s in seats})
        else:
            names = {s.key: (s.name, s.side) for s in seats}
            observer = TerminalObserver(console, debate.fmt, names, show_private=show_private)
            if debate.events.exists():
                console.print(f"Resuming debate {debate.pk} after {debate.events.count()} events.", style="yellow")
                for event in debate.events.select_related("seat").exclude(kind=Event.Kind.ERROR):
                    observer.print_event(event, event.seat.key if event.seat else None)
        stats = RunStats()
        started = time.perf_counter()
        try:
            # Also pushed to its page, where the browser watches it live (a broadcaster per run: its pushes belong
            # to the run's event loop).
            debate = asyncio.run(run_debate(debate.pk, AlsoLive(observer, debate.pk), stats=stats))
            while debate.status == Debate.Status.WAITING:
                self.take_human_turn(debate, console)
                debate = asyncio.run(run_debate(debate.pk, AlsoLive(observer, debate.pk), stats=stats))
        except KeyboardInterrupt as stop:
            self.stop(debate, stop)
        except DebateDeleted:
            raise CommandError(f"debate {debate.pk} was deleted while it ran") from None
        if json_lines:
            return
        console.print()
        print_verdict(console, debate)
        elapsed = time.perf_counter() - started
        summary = (
            f"debate {debate.pk} {debate.get_status_display()} · {stats.calls} LLM calls · "
            f"{stats.tokens_in} tokens in, {stats.tokens_out} out · {elapsed:.1f}s"
        )
        if debate.status == Debate.Status.ERROR:
            console.print(f"Error: {debate.error_text}", style="bold red")
            console.print(
                f"The partial transcript is saved. Retry with: uv run python manage.py debate --resume {debate.pk}"
            )
            console.print(summary)
            sys.exit(1)
        console.print(summary, style="bold")
