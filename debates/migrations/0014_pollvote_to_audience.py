"""The poll's votes move to the audience app (audience/migrations/0001_initial.py takes the table): debates forgets
the model, and the table is left as it is."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("debates", "0013_person_message_steps"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(state_operations=[migrations.DeleteModel(name="PollVote")]),
    ]
