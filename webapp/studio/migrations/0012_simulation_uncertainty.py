from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('studio', '0011_share'),
    ]

    operations = [
        migrations.AddField(
            model_name='simulation',
            name='uncertainty',
            field=models.JSONField(blank=True, help_text='The prediction interval asked for at launch ({samples, seed, scale}: simulator.uncertainty), or null for none.', null=True),
        ),
    ]
