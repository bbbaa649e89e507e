"""Verification.methodology_version: the version of docs/methodology.md the stored figures were
computed with. Rows that exist already were computed under v1 and say so until their next sync
recomputes them under v2; new rows default to v2 (issue 33)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("startups", "0005_postgresql_growth_order_index")]

    operations = [
        migrations.AddField(
            model_name="verification",
            name="methodology_version",
            field=models.CharField(default="v1", max_length=10),
            preserve_default=False,
        ),
        migrations.AlterField(
            model_name="verification",
            name="methodology_version",
            field=models.CharField(default="v2", max_length=10),
        ),
    ]
