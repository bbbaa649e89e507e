from django.db import migrations, models


class Migration(migrations.Migration):
    """The Generation model moves from the project package to core: state only, the table
    (created by openstartup's first migration) keeps its name and rows."""

    initial = True

    dependencies = [("openstartup", "0002_generation_rows")]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="Generation",
                    fields=[
                        (
                            "kind",
                            models.CharField(max_length=8, primary_key=True, serialize=False),
                        ),
                        ("token", models.CharField(max_length=32)),
                    ],
                    options={"db_table": "openstartup_generation"},
                ),
            ],
            database_operations=[],
        ),
    ]
