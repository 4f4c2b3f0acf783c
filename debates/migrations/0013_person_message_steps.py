"""A person's messages were stored as step "human" until they were stored as the speech they give: the JSON
export and the API gave those no label, and their cards named no speech. Each is given the step its format
awaited when it came, and its card is drawn again; a message no step asked for keeps "human"."""

from django.db import migrations

from debates.formats import FormatError, get_format
from debates.formats.base import PERSON_STEP
from debates.records import config_of, person_steps, record_of


def label_messages(apps, schema_editor):
    Debate = apps.get_model("debates", "Debate")
    Event = apps.get_model("debates", "Event")
    waiting = Event.objects.filter(kind="USER", step=PERSON_STEP).values_list("debate_id", flat=True).distinct()
    for debate in Debate.objects.filter(pk__in=list(waiting)).iterator():
        try:
            fmt = get_format(debate.format, debate.card_source)
        except FormatError:
            continue  # a format this code no longer has: its messages keep their step
        seats = list(debate.seats.all())
        keys = {s.pk: s.key for s in seats}
        events = list(debate.events.exclude(kind="ERROR"))
        steps = person_steps(fmt, config_of(debate, seats), [record_of(e, keys.get(e.seat_id)) for e in events])
        for event in events:
            if event.ordinal in steps:
                event.step, event.html = steps[event.ordinal], ""
                event.save(update_fields=["step", "html"])


class Migration(migrations.Migration):
    dependencies = [
        ("debates", "0012_debate_stop_requested"),
    ]

    operations = [migrations.RunPython(label_messages, migrations.RunPython.noop)]
