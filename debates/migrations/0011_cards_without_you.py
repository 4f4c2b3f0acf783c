"""A person's stored speech cards said "(you)" to every viewer of the debate, its share page's included: they are
rendered again as a page shows them (without it; the page adds it for the person in the seat alone)."""

from django.db import migrations


def forget_cards(apps, schema_editor):
    # An empty card is rendered when the page is drawn (debates/event_cards.py: cards_of), from today's template.
    apps.get_model("debates", "Event").objects.filter(kind="USER", html__contains="(you)").update(html="")


class Migration(migrations.Migration):
    dependencies = [
        ("debates", "0010_debate_material"),
    ]

    operations = [migrations.RunPython(forget_cards, migrations.RunPython.noop)]
