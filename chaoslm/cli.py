"""What every command that creates work (`debate`, `tournament run`, `experiment run`) does alike: whose it is
(`--owner`), refusing `--enqueue` where nothing would run it, and the addresses to print once it exists."""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import CommandError, CommandParser
from django.db import models
from django.urls import NoReverseMatch, reverse

from chaoslm import runner
from chaoslm.sharing import Visibility

ENQUEUE_NEEDS_CELERY = "--enqueue needs CHAOSLM_RUNNER=celery: the inline runner lives in this process"


def add_owner_argument(parser: CommandParser, noun: str) -> None:
    parser.add_argument(
        "--owner",
        metavar="USERNAME",
        help=f"the user the {noun} belongs to: it shows among theirs, they manage its sharing, and it counts against "
        f"their running cap (default: {settings.CHAOSLM_ADMIN_USER}, the admin `make run` creates)",
    )


def owner(username: str | None) -> tuple[Any, str]:
    """The user named by `--owner` (CommandError if there is none), or the admin `make run` creates; and a line
    saying whose it is."""
    User = get_user_model()
    if username:
        found = User.objects.filter(username=username).first()
        if found is None:
            raise CommandError(f"there is no user {username!r} to own it (--owner takes an existing username)")
        return found, f"Owner: {username}"
    default = settings.CHAOSLM_ADMIN_USER
    found = User.objects.filter(username=default).first()
    if found is None:
        return None, (
            f"Owner: nobody (there is no user {default!r}: create it with `manage.py ensure_admin`, or pass "
            "--owner USERNAME); only staff can see it in the browser"
        )
    return found, f"Owner: {default} (the default; --owner USERNAME gives it to another user)"


def refuse_enqueue_inline() -> None:
    """`--enqueue` returns at once: only Celery workers run the work after this process has gone."""
    if settings.CHAOSLM_RUNNER != "celery":
        raise CommandError(ENQUEUE_NEEDS_CELERY)


def addresses(thing: models.Model, api: str = "") -> list[str]:
    """The lines naming its page and, unless it is private, its share link (URL names `<model>_detail`,
    `<model>_share`, as chaoslm/sharing.py's); a kind of batch with no pages has neither, and the line says where
    the API has it instead (`api`, its path)."""
    name = thing._meta.model_name
    base = settings.CHAOSLM_SITE_URL
    try:
        lines = [f"Page: {base}{reverse(f'{name}_detail', args=[thing.pk])}"]
    except NoReverseMatch:
        return [f"Page: none (no page shows a {thing._meta.verbose_name}); the API has it at {base}{api}"]
    if thing.visibility != Visibility.PRIVATE:  # type: ignore[attr-defined]
        lines.append(f"Share link: {base}{reverse(f'{name}_share', args=[thing.share_token])}")  # type: ignore[attr-defined]
    return lines


# Seconds a command that has finished its work waits for what it set going on its inline runner (its webhooks'
# deliveries) beyond one delivery attempt's timeout.
SETTLE_SLACK = 5.0


def settle(write: Callable[[str], Any]) -> None:
    """Before the command exits: let the work it set going in this process end (its webhooks' deliveries), for
    about one attempt; what is still trying then is left to the server's sweep, and the command says so."""
    left = runner.inline.settle(settings.CHAOSLM_WEBHOOK_TIMEOUT + SETTLE_SLACK)
    if left:
        write(
            f"{left} webhook {'delivery is' if left == 1 else 'deliveries are'} still being tried: "
            "a running ChaosLM server's sweep tries again later."
        )


class Terminated(KeyboardInterrupt):
    """SIGTERM (`kill`, `timeout`, a closed terminal), raised where Ctrl-C's KeyboardInterrupt would be: every
    command stops the same way on either, and exits with the signal's own status (`exit_status`)."""


def _terminated(signum: int, frame: Any) -> None:
    raise Terminated


def stop_on_sigterm() -> None:
    """SIGTERM stops the command as Ctrl-C does: the work is left resumable, and the command says how to resume it.
    Without this the process would die at once, its debate still saying "running" until a sweep found its process
    gone. Raised here, not passed on as SIGINT: a command started where SIGINT is ignored (`cmd &` in a script,
    nohup) would then ignore `kill` too."""
    if threading.current_thread() is threading.main_thread():  # only there may a handler be set (a test's thread)
        signal.signal(signal.SIGTERM, _terminated)


def signal_name(stop: KeyboardInterrupt) -> str:
    """How the person stopped the command, in the words of its stop line."""
    return "SIGTERM" if isinstance(stop, Terminated) else "Ctrl-C"


def exit_status(stop: KeyboardInterrupt) -> int:
    """The shell's status for a command stopped by a signal: 128 + the signal (130 Ctrl-C, 143 SIGTERM)."""
    return 128 + (signal.SIGTERM if isinstance(stop, Terminated) else signal.SIGINT)
