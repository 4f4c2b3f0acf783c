from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("debates", "0011_cards_without_you"),
    ]

    operations = [
        migrations.AddField(
            model_name="debate",
            name="stop_requested",
            field=models.BooleanField(default=False),
        ),
    ]
