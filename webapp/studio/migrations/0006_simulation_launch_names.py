"""Runs keep the names of the system and application models they were launched from."""

from django.db import migrations, models
from django.db.models import OuterRef, Subquery


def names_at_migration(apps, schema_editor):
    """Give existing runs the names their records have now: the best record of the names at
    launch there is (a run whose record was deleted keeps none)."""
    Simulation = apps.get_model("studio", "Simulation")
    SystemModel = apps.get_model("hwdb", "SystemModel")
    ApplicationModel = apps.get_model("studio", "ApplicationModel")
    Simulation.objects.filter(system_model__isnull=False).update(
        system_name=Subquery(
            SystemModel.objects.filter(pk=OuterRef("system_model_id")).values("name")[:1]
        )
    )
    Simulation.objects.filter(application__isnull=False).update(
        application_name=Subquery(
            ApplicationModel.objects.filter(pk=OuterRef("application_id")).values("name")[:1]
        )
    )


class Migration(migrations.Migration):
    dependencies = [
        ("hwdb", "0002_cache_and_fabric_types"),
        ("studio", "0005_simulation_timeline_limit"),
    ]

    operations = [
        migrations.AddField(
            model_name="simulation",
            name="system_name",
            field=models.CharField(
                blank=True,
                help_text="The system model's name at launch (empty: launched from a bare snapshot).",
                max_length=200,
            ),
        ),
        migrations.AddField(
            model_name="simulation",
            name="application_name",
            field=models.CharField(
                blank=True,
                help_text="The application model's name at launch (empty: launched from a bare source).",
                max_length=200,
            ),
        ),
        migrations.RunPython(names_at_migration, migrations.RunPython.noop),
    ]
