import errno
import ipaddress
import signal
import socket
import sys
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import DatabaseError, connection

from chaoslm import cli, health
from chaoslm.llm import local_model


class Command(BaseCommand):
    help = (
        "Start the web server (daphne, websockets included) and, when no endpoint is configured, "
        "the embedded local model beside it, restarted if it exits."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("addrport", nargs="?", default="127.0.0.1:8000")
        parser.add_argument(
            "--check", action="store_true", help="only check that the address is free (make run does, before migrating)"
        )

    def handle(self, *args: Any, addrport: str, check: bool = False, **options: Any) -> None:
        # First of all: a second `make run` beside a running one says so at once, and fails, rather than migrating,
        # starting a model and printing a banner before daphne's "Address already in use" (and exit status 0).
        taken = address_taken(addrport)
        if taken:
            raise CommandError(taken)
        if check:
            return
        # A bad CHAOSLM_LOCAL_MODEL is said first: it needs no database, and it is what this person just set.
        if local_model.in_use() and not local_model.listening():
            try:
                local_model.command()
            except local_model.LocalModelMissing as error:
                raise CommandError(str(error)) from None
        # Before the model and the banner: with the database down, runserver's migration check would end in a
        # traceback.
        down = database_down()
        if down:
            raise CommandError(down)
        if settings.DEBUG and not is_loopback(addrport):
            raise CommandError(
                f"Refusing to serve on {addrport} with debug on: Django's debug pages (tracebacks, settings, "
                "URL patterns) would reach every machine that can connect. Serve on 127.0.0.1 (the default), "
                "or turn debug off: CHAOSLM_DEBUG=false CHAOSLM_SECRET_KEY=<a long random string>, and for "
                "plain HTTP (no TLS) also CHAOSLM_SSL_REDIRECT=false CHAOSLM_SECURE_COOKIES=false."
            )
        if not local_model.in_use():
            self.stdout.write(f"Models from {settings.OPENAI_BASE_URL or 'OpenAI'} (OPENAI_BASE_URL).")
        elif local_model.listening() and local_model.orphan() is None:
            self.stdout.write(f"Using the local model already running at {local_model.base_url()}.")
        # Until daphne serves (it stops on SIGINT and SIGTERM by itself), a stop ends the model's start too; a
        # closed terminal stops it as SIGTERM does: the model runs in a session of its own, which a hang-up
        # does not reach, and only this process's stop ends it.
        cli.stop_on_sigterm()
        signal.signal(signal.SIGHUP, lambda *_: signal.raise_signal(signal.SIGTERM))
        try:
            # The pages are served while the model starts (it says when it answers): a debate started meanwhile
            # waits for it, and everything else needs no model.
            with local_model.running(self.stdout.write, wait=False):
                self.serve(addrport)
        except local_model.LocalModelMissing as error:
            raise CommandError(str(error)) from None
        except KeyboardInterrupt as stop:
            model = "; the embedded model is stopped too" if local_model.in_use() else ""
            self.stderr.write(f"Stopped ({cli.signal_name(stop)}) before serving{model}.")
            sys.exit(cli.exit_status(stop))

    def serve(self, addrport: str) -> None:
        host = addrport if ":" in addrport else f"127.0.0.1:{addrport}"
        self.stdout.write(self.style.SUCCESS(f"ChaosLM: http://{host}/   admin: http://{host}/admin/"))
        # `make run` is what newcomers use: a missing page or a crash shows ChaosLM's own 404/403/500 pages, never
        # Django's debug pages (which list every URL pattern); a traceback goes to this console (settings.LOGGING).
        # `manage.py runserver` keeps them for a developer who wants them.
        settings.DEBUG = False
        # With debug off Django stops serving static files; this server is the embedded setup's only one.
        call_command("runserver", addrport, use_reloader=False, insecure_serving=True)


def is_loopback(addrport: str) -> bool:
    """Whether `addrport` ("8000", "127.0.0.1:8000", "[::1]:8000", "localhost:8000") listens on this machine only."""
    host = addrport.rpartition(":")[0] if ":" in addrport else ""
    host = host.strip("[]")
    if not host or host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a host name other than localhost may resolve to any interface


def database_down() -> str | None:
    """Why the database cannot be used (one sentence, no password in it), or None when it answers."""
    try:
        connection.ensure_connection()
    except DatabaseError as error:
        reason = health.redact(str(error)) or type(error).__name__
        return f"The database does not answer ({reason}): start it, or point DATABASE_URL at one that runs."
    return None


def address_taken(addrport: str) -> str | None:
    """Why the server cannot listen on `addrport` (one sentence), or None when it can."""
    host, _, port = addrport.rpartition(":") if ":" in addrport else ("127.0.0.1", ":", addrport)
    host = host.strip("[]") or "127.0.0.1"
    if not port.isdigit():
        return None  # runserver says what is wrong with it
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        # As daphne binds (SO_REUSEADDR): a port whose last server has just exited is free, one in use is not.
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, int(port)))
        except OSError as error:
            if error.errno == errno.EADDRINUSE:
                return (
                    f"{host}:{port} is already in use (is ChaosLM already running there?): stop it, or serve on "
                    f"another port, e.g. make run ADDR={host}:{int(port) + 1}"
                )
            if error.errno == errno.EADDRNOTAVAIL:
                return f"{host} is not an address of this machine: serve on one of its own, e.g. 127.0.0.1:{port}"
            raise
    return None
