from typing import Any

from django.db import migrations, models

from debates import event_cards


def render_cards(apps: Any, schema_editor: Any) -> None:
    """Store the card of every event saved before cards were stored."""
    Event = apps.get_model("debates", "Event")
    batch = []
    for event in Event.objects.select_related("seat").iterator(chunk_size=500):
        event.html = event_cards.render(event, event.seat)
        batch.append(event)
        if len(batch) == 500:
            Event.objects.bulk_update(batch, ["html"])
            batch = []
    Event.objects.bulk_update(batch, ["html"])


class Migration(migrations.Migration):
    dependencies = [
        ("debates", "0001_initial"),
    ]

    operations = [
        migrations.AddField(
            model_name="event",
            name="html",
            field=models.TextField(blank=True, editable=False),
        ),
        migrations.RunPython(render_cards, migrations.RunPython.noop),
    ]
