"""Webhooks from every runner: a debate run by `manage.py debate`, a tournament run by `manage.py tournament run`
and a tournament the server resumes after its runner was killed all deliver, signed, to a real receiver on this
machine (CHAOSLM_WEBHOOKS_ALLOW_NETWORKS allows loopback). Each ran in a process other than the web server's, where
a delivery used to fail with "Single thread executor already being used, would deadlock" and stay pending."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from datetime import timedelta

import pytest
from django.utils import timezone

from api import webhooks
from api.models import Delivery, Webhook
from chaoslm import runner
from tests.api.conftest import ROOT, api, make_token
from tests.api.receiver import Receiver
from tests.api.test_webhooks import SECRET, verified, wait_until
from tests.servers import run_manage, running_site

SPEC = (
    "name: {name}\noptions: {{turns: 2}}\ndebaters: [Ada Sterling, Marcus Vale]\njudges: [Judge Ines Okafor]\n"
    "questions: ['Should cities ban cars?']\nsides: once\n"
)


def query(database, sql: str):
    """The one value `sql` selects, read straight from a site's SQLite file."""
    with sqlite3.connect(database, timeout=10) as connection:
        return connection.execute(sql).fetchone()[0]


def register(server: str, user: str, receiver: Receiver, events: list[str]) -> int:
    with api(server, make_token(server, user)) as client:
        reply = client.post("/webhooks", json={"url": receiver.url, "secret": SECRET, "events": events})
        assert reply.status_code == 201, reply.text
        return reply.json()["id"]


def deliveries(server: str, user: str, hook_id: int) -> list[tuple]:
    with api(server, make_token(server, user)) as client:
        found = client.get(f"/webhooks/{hook_id}/deliveries").json()
    return [(d["kind"], d["status"], d["attempts"], d["last_error"]) for d in found]


def test_a_debate_run_by_the_command_line_tells_its_webhook(server, api_env, llm):
    llm.configure(latency=0.0, reply_words=8)
    receiver = Receiver()
    try:
        hook = register(server, "otto", receiver, ["debate.finished"])
        done = run_manage(
            "debate", "duel", "--topic", "Should cities ban cars?", "--a", "Ada Sterling", "--b", "Marcus Vale",
            "--turns", "2", "--owner", "otto", env=api_env,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert "deadlock" not in done.stdout + done.stderr
        assert len(receiver.received) == 1  # sent before the command returned
        body = verified(receiver.received[0])
        assert body["type"] == "debate.finished" and body["debate"]["status"] == "completed"
        assert body["debate"]["topic"] == "Should cities ban cars?"
        assert deliveries(server, "otto", hook) == [("debate.finished", "delivered", 1, "")]
    finally:
        receiver.close()


def test_a_tournament_run_by_the_command_line_tells_its_webhook(server, api_env, llm, tmp_path):
    llm.configure(latency=0.0, reply_words=8)
    receiver = Receiver()
    spec = tmp_path / "cli.yaml"
    spec.write_text(SPEC.format(name="Command line cup"))
    try:
        hook = register(server, "stella", receiver, ["tournament.finished"])
        done = run_manage("tournament", "run", str(spec), "--owner", "stella", env=api_env)
        assert done.returncode == 0, done.stderr
        assert "deadlock" not in done.stdout + done.stderr
        assert len(receiver.received) == 1
        body = verified(receiver.received[0])
        assert body["type"] == "tournament.finished"
        assert body["tournament"]["name"] == "Command line cup"
        assert body["tournament"]["progress"] == {"total": 1, "done": 1, "failed": 0}
        assert deliveries(server, "stella", hook) == [("tournament.finished", "delivered", 1, "")]
    finally:
        receiver.close()


def test_a_tournament_resumed_by_the_server_after_its_runner_was_killed_tells_its_webhook(api_env, llm, tmp_path):
    """The tournament's command is killed (SIGKILL) mid-run; a server started on the same database resumes it at
    once, runs it to its end and delivers its webhook."""
    llm.configure(latency=0.3, reply_words=8)
    database = tmp_path / "resumed.sqlite3"
    env = {**api_env, "DATABASE_URL": f"sqlite:///{database}"}
    assert run_manage("migrate", "--noinput", env=env).returncode == 0
    assert run_manage("import_personas", "personas/samples/", env=env).returncode == 0
    made = "from django.contrib.auth.models import User; User.objects.create_user('rita', password='pw-rita-123')"
    assert run_manage("shell", "-c", made, env=env).returncode == 0
    spec = tmp_path / "resumed.yaml"
    spec.write_text(SPEC.format(name="Resumed cup"))
    receiver = Receiver()
    try:
        # Registered before the run, straight in the database: the server that will resume it is not up yet.
        hook = (
            "from api import webhooks; from django.contrib.auth.models import User; "
            f"print(webhooks.register(User.objects.get(username='rita'), {receiver.url!r}, {SECRET!r}, "
            "['tournament.finished']).pk)"
        )
        assert run_manage("shell", "-c", hook, env=env).returncode == 0
        command = subprocess.Popen(
            [sys.executable, "manage.py", "tournament", "run", str(spec), "--owner", "rita"],
            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        )  # fmt: skip
        try:
            deadline = time.monotonic() + 60
            while query(database, "SELECT count(*) FROM debates_event") < 1:
                assert time.monotonic() < deadline, "the tournament never started"
                time.sleep(0.2)
        finally:
            os.kill(command.pid, signal.SIGKILL)
            command.wait(10)
        assert query(database, "SELECT status FROM tournaments_tournament") == "running"
        with running_site(env, "resumed-tournament"):
            wait_until(lambda: len(receiver.received) >= 1, timeout=60)
        body = verified(receiver.received[0])
        assert body["type"] == "tournament.finished" and body["tournament"]["name"] == "Resumed cup"
        assert body["tournament"]["progress"] == {"total": 1, "done": 1, "failed": 0}
        assert len(receiver.received) == 1
    finally:
        receiver.close()


@pytest.mark.django_db(transaction=True)
def test_a_delivery_left_pending_past_its_time_is_sent_by_the_sweep_that_recovers_work(people, settings):
    """Its process ended between attempts (a command, a restarted server): the sweep that resumes stopped work takes
    it up once its next attempt is overdue, not before, and leaves a delivered one alone."""
    settings.CHAOSLM_WEBHOOKS_ALLOW_NETWORKS = "127.0.0.1/32"
    settings.CHAOSLM_WEBHOOK_BACKOFF = 10.0
    receiver = Receiver()
    try:
        hook = Webhook.objects.create(owner=people["owner"], url=receiver.url, secret=SECRET, events=["x"])
        due = webhooks.OVERDUE_GRACE + settings.CHAOSLM_WEBHOOK_TIMEOUT
        made = [
            Delivery.objects.create(webhook=hook, kind="x", key=f"k{n}", payload={"n": n}, attempts=attempts)
            for n, attempts in enumerate([0, 2, 2])
        ]
        ago = timezone.now() - timedelta(seconds=due + 15)
        # Never tried, its process gone; tried twice, its 20 s backoff long past; tried twice, backoff not yet over.
        Delivery.objects.filter(pk=made[0].pk).update(updated_at=ago)
        Delivery.objects.filter(pk=made[1].pk).update(updated_at=ago - timedelta(seconds=20))
        # (a minute short of due, so a slow machine's two sweeps stay before it)
        Delivery.objects.filter(pk=made[2].pk).update(updated_at=ago + timedelta(seconds=60))
        runner.sweep()
        runner.inline.wait_idle()
        assert sorted(verified(r)["n"] for r in receiver.received) == [0, 1]
        assert [Delivery.objects.get(pk=d.pk).status for d in made] == ["delivered", "delivered", "pending"]
        Delivery.objects.filter(pk=made[0].pk).update(updated_at=ago)
        runner.sweep()
        runner.inline.wait_idle()
        assert len(receiver.received) == 2  # a delivered one is not sent again
    finally:
        receiver.close()
