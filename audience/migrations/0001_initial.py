"""The poll's votes, moved from debates (debates/migrations/0014_pollvote_to_audience.py) with every row: the model
is made over the table debates made (debates_pollvote), which is then renamed audience_pollvote, and its content
type goes with it (so its permissions do)."""

import django.db.models.deletion
from django.db import migrations, models


def _move_content_type(apps, schema_editor, source: str, target: str) -> None:
    ContentType = apps.get_model("contenttypes", "ContentType")
    if not ContentType.objects.filter(app_label=target, model="pollvote").exists():
        ContentType.objects.filter(app_label=source, model="pollvote").update(app_label=target)


def content_type_forward(apps, schema_editor):
    _move_content_type(apps, schema_editor, "debates", "audience")


def content_type_back(apps, schema_editor):
    _move_content_type(apps, schema_editor, "audience", "debates")


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("contenttypes", "0002_remove_content_type_name"),
        ("debates", "0014_pollvote_to_audience"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="PollVote",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("phase", models.CharField(choices=[("before", "Before"), ("after", "After")], max_length=10)),
                        ("voter", models.CharField(max_length=64)),
                        ("choice", models.CharField(max_length=30)),
                        ("updated_at", models.DateTimeField(auto_now=True)),
                        (
                            "debate",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="poll_votes",
                                to="debates.debate",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "debates_pollvote",
                        "constraints": [
                            models.UniqueConstraint(fields=("debate", "phase", "voter"), name="one_vote_per_phase")
                        ],
                    },
                ),
            ]
        ),
        migrations.AlterModelTable(name="pollvote", table=None),
        migrations.RunPython(content_type_forward, content_type_back),
    ]
