"""Migrations debates 0014 and audience 0001: the poll's votes move from the debates app to the audience app with
every row, on a database the code before the move made (its table debates_pollvote, its content type)."""

import pytest
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from audience.models import PollVote

BEFORE = [("debates", "0013_person_message_steps"), ("audience", None)]


def _migrate(targets: list[tuple[str, str | None]]) -> MigrationExecutor:
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return MigrationExecutor(connection)


@pytest.mark.django_db(transaction=True)
def test_every_poll_vote_moves_to_the_audience_app():
    before = _migrate(BEFORE)
    assert "debates_pollvote" in connection.introspection.table_names()
    old = before.loader.project_state(BEFORE[0]).apps
    Debate, OldPollVote = old.get_model("debates", "Debate"), old.get_model("debates", "PollVote")
    debate = Debate.objects.create(topic="Should voting be compulsory?", format="oxford")
    other = Debate.objects.create(topic="Cars?", format="oxford")
    rows = [
        (debate.pk, "before", "user:1", "a"),
        (debate.pk, "before", "anon:someone", "undecided"),
        (debate.pk, "after", "user:1", "b"),
        (other.pk, "before", "user:1", "b"),
    ]
    for debate_id, phase, voter, choice in rows:
        OldPollVote.objects.create(debate_id=debate_id, phase=phase, voter=voter, choice=choice)
    stored = sorted(OldPollVote.objects.values_list("pk", "debate_id", "phase", "voter", "choice", "updated_at"))
    content_type = ContentType.objects.get(app_label="debates", model="pollvote")

    _migrate(before.loader.graph.leaf_nodes())

    tables = connection.introspection.table_names()
    assert "audience_pollvote" in tables
    assert "debates_pollvote" not in tables
    assert sorted(PollVote.objects.values_list("pk", "debate_id", "phase", "voter", "choice", "updated_at")) == stored
    assert sorted(PollVote.objects.filter(debate_id=debate.pk).values_list("phase", "choice")) == [
        ("after", "b"),
        ("before", "a"),
        ("before", "undecided"),
    ]
    # The one unique vote per debate, phase and voter still holds on the moved table.
    assert PollVote.objects.filter(debate_id=other.pk).get().choice == "b"
    moved = ContentType.objects.get(pk=content_type.pk)
    assert (moved.app_label, moved.model) == ("audience", "pollvote")
    assert moved.model_class() is PollVote
