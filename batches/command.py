"""The command line of a batch of debates (`manage.py tournament`, `manage.py experiment`): run a spec with a live
progress bar, resume one, print its report. Each command says how to create and report its own kind; the kind
(batches/kinds.py) runs it."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import IO, Any, NoReturn

from django.core.management.base import BaseCommand, CommandError, CommandParser
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from batches.checks import BatchError, cost_sentence
from batches.kinds import PAUSED, RUNNING, BatchKind
from batches.spec import SpecError, checked, spec_arguments
from chaoslm import cli
from chaoslm.llm import local_model

# Off a terminal (a pipe, a file, a test) the report's lines and tables print whole, not cut at 80 columns.
UNWRAPPED_WIDTH = 1000


def report_console(file: IO[str]) -> Console:
    """A console for the command's output: a terminal's own width, or lines printed whole when not a terminal."""
    return Console(file=file, width=None if file.isatty() else UNWRAPPED_WIDTH)


def table(title: str, columns: Iterable[str]) -> Table:
    """A report's table with these column headings."""
    made = Table(title=title)
    for column in columns:
        made.add_column(column)
    return made


class BatchCommand(BaseCommand):
    """A kind's command says how to read its spec, how large it is, its JSON and its printed report."""

    kind: BatchKind
    report_help: str
    # The spec at a path: a dataclass whose fields are the arguments of `create_batch` (SpecError if it cannot).
    read_spec: Callable[[Path], Any]
    # The kind's checks of its create function's arguments, nothing saved (BatchError with every problem), which
    # size it, time it and price it (`.time`, a debates.estimates.Duration, and `.cost`); a kind with none is
    # checked by its create alone.
    check_batch: Callable[..., Any] | None = None
    # The kind's create function (BatchError if it refuses).
    create_batch: Callable[..., Any]

    @property
    def noun(self) -> str:
        return str(self.kind.model._meta.verbose_name)

    @property
    def help(self) -> str:  # type: ignore[override]
        return f"Run {self._a_noun()} from a YAML spec with a live progress bar, resume one, or print its report."

    def _a_noun(self) -> str:
        return f"{'an' if self.noun[0] in 'aeiou' else 'a'} {self.noun}"

    def size(self, spec: Any, checked: Any) -> str:
        """How large the batch of this spec is, in a few words; `checked` is what `check_batch` found of it, for
        its owner (the cards they may use), or None for a kind with no checks."""
        raise NotImplementedError

    def create(self, path: Path, console: Console, owner: Any) -> Any:
        """The batch from the spec at `path`, belonging to `owner` (CommandError with what is wrong)."""
        try:
            # Every problem of the file and of what it asks for at once, before anything is printed or saved.
            check = self.check_batch
            spec, found = checked(
                lambda: self.read_spec(path),
                lambda read: check(**spec_arguments(read), owner=owner) if check is not None else None,
            )
            # Its size, its time and its cost range, as the new form says them.
            said = f" {found.time.sentence()} {cost_sentence(found.cost)}" if found is not None else ""
            console.print(f"[bold]{spec.name}[/]: {self.size(spec, found)}{said}", highlight=False)
            return self.create_batch(**spec_arguments(spec), owner=owner)
        except (SpecError, BatchError) as error:
            raise CommandError(str(error)) from None

    def print_heading(self, batch: Any, console: Console, debates: str) -> None:
        """The report's first line: the batch, its status and its progress (`debates`: what it counts)."""
        figures = self.kind.progress(batch)
        console.print(
            f"[bold]{batch.name}[/] (#{batch.pk}): {batch.get_status_display()}, "
            f"{figures.done} of {figures.total} {debates} done, {figures.failed} failed.",
            highlight=False,
        )

    # The batch's report as plain JSON (the kind's exports.as_json).
    as_json: Callable[[Any], dict[str, Any]]

    def print_report(self, batch: Any, console: Console) -> None:
        raise NotImplementedError

    def add_arguments(self, parser: CommandParser) -> None:
        noun = self.noun
        sub = parser.add_subparsers(dest="action", required=True)
        run = sub.add_parser("run", help=f"create {self._a_noun()} from SPEC.yaml and run it")
        run.add_argument("spec", type=Path)
        run.add_argument("--json", action="store_true", help="print the final report as JSON")
        run.add_argument(
            "--enqueue",
            action="store_true",
            help="start it on the Celery workers (CHAOSLM_RUNNER=celery), print its id and return",
        )
        cli.add_owner_argument(run, noun)
        resume = sub.add_parser("resume", help=f"go on with a stopped, paused or crashed {noun}")
        resume.add_argument("id", type=int)
        resume.add_argument("--json", action="store_true")
        resume.add_argument("--enqueue", action="store_true")
        resume.add_argument(
            "--stalled-after",
            type=float,
            default=0.0,
            help=f"restart the {noun}'s debates in flight that made no progress for this many seconds "
            "(default 0: all of them, as after a crash)",
        )
        report = sub.add_parser("report", help=self.report_help)
        report.add_argument("id", type=int)
        report.add_argument("--json", action="store_true")

    def handle(self, *args: Any, **options: Any) -> None:
        cli.stop_on_sigterm()
        # With --json, stdout carries the JSON alone; the size and the progress bar go to stderr.
        console = report_console((self.stderr if options.get("json") else self.stdout)._out)
        action = options["action"]
        if options.get("enqueue"):
            cli.refuse_enqueue_inline()
        if action == "run":
            owner, whose = cli.owner(options["owner"])
            batch = self.create(options["spec"], console, owner)
            for line in (whose, *cli.addresses(batch, f"/api/v1/batches/{self.kind.kind}/{batch.pk}")):
                console.print(line, highlight=False, soft_wrap=True)
        else:
            batch = self.kind.model.objects.filter(pk=options["id"]).first()
            if batch is None:
                raise CommandError(f"there is no {self.noun} {options['id']}")
        if action in ("run", "resume"):
            if options["enqueue"]:
                self.go(action, batch, options)
                self.stdout.write(str(batch.pk))
                return
            try:
                # Before the start: the inline runner's first calls go out at once.
                with local_model.running(lambda line: console.print(line, highlight=False, soft_wrap=True)):
                    try:
                        self.go(action, batch, options)
                        self._watch(batch, console)
                    except KeyboardInterrupt:
                        # Here, while the model it runs on still answers: what it started stops with it.
                        self.kind.pause_here(batch)
                        raise
                cli.settle(lambda line: console.print(line, highlight=False, soft_wrap=True))
            except KeyboardInterrupt as stop:
                self.stopped(batch, stop)
            except local_model.LocalModelMissing as error:
                raise CommandError(
                    f"{error}\n{self.noun.capitalize()} {batch.pk} is saved: once a model answers, run it with "
                    f"uv run python manage.py {self.noun} resume {batch.pk}"
                ) from None
        batch.refresh_from_db()
        if options["json"]:
            self.stdout.write(json.dumps(self.as_json(batch), indent=2))
        else:
            self.print_report(batch, console)

    def stopped(self, batch: Any, stop: KeyboardInterrupt) -> NoReturn:
        """Ctrl-C or SIGTERM: one plain line saying what stopped and how to go on, and the shell's status for it."""
        batch.refresh_from_db()
        how = cli.signal_name(stop)
        if batch.status == PAUSED:
            line = (
                f"Stopped ({how}): {self.noun} {batch.pk} is paused: its debates in flight stop, nothing more "
                f"runs. Go on with: uv run python manage.py {self.noun} resume {batch.pk}"
            )
        else:
            line = f"Stopped ({how}): {self.noun} {batch.pk} is {batch.get_status_display()}."
        self.stderr.write(line)
        sys.exit(cli.exit_status(stop))

    def go(self, action: str, batch: Any, options: dict[str, Any]) -> None:
        """Set a new batch going, or a stopped one going on."""
        if action == "run":
            self.kind.start(batch)
            return
        try:
            self.kind.resume(batch, stalled_after=options["stalled_after"])
        except BatchError as error:
            raise CommandError(str(error)) from None

    def _watch(self, batch: Any, console: Console) -> None:
        """The live progress bar, until the batch settles."""
        columns = (
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[detail]}"),
            TimeElapsedColumn(),
        )
        with Progress(*columns, console=console, transient=False) as bar:
            task = bar.add_task(batch.name, total=None, detail="")
            while True:
                batch.refresh_from_db()
                figures = self.kind.progress(batch)
                doing = "running" if batch.status == RUNNING or not figures.running else "stopping"
                detail = f"{figures.running} {doing} · {figures.failed} failed"
                if figures.eta_text:
                    detail += f" · {figures.eta_text}"
                bar.update(task, total=figures.total, completed=figures.done + figures.failed, detail=detail)
                if self.kind.is_settled(batch.pk):
                    break
                time.sleep(0.3)
