from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('studio', '0009_simulation_failures'),
    ]

    operations = [
        migrations.AddField(
            model_name='simulation',
            name='workload',
            field=models.JSONField(blank=True, help_text='For a workload evaluation (webapp.studio.services.workloads): its kind and the step_basis its figures are computed from; null for other runs.', null=True),
        ),
    ]
