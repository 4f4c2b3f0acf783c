from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("debates", "0009_debate_runner"),
    ]

    operations = [
        migrations.AddField(
            model_name="debate",
            name="material",
            field=models.TextField(blank=True),
        ),
    ]
